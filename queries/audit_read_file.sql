-- The rows of an exported file as the engine reads them back, typed as
-- exported, so they can be hashed again in the canonical form.
SELECT * FROM file({path:String}, {format:String}, {structure:String})
