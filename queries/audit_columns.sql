-- The columns of an export query and their types, without reading its
-- rows: one row whose member "toTypeName(any(NAME))" is the type of NAME.
SELECT * APPLY(any) APPLY(toTypeName) FROM (/* export query */ LIMIT 0)
