-- The rows of an exported file a server read back, the file sent with the
-- request as the external table exported_file (its structure the exported
-- column types), so they can be hashed again in the canonical form.
SELECT * FROM exported_file
