-- Writes the rows of an export query to a Parquet file where the engine
-- runs (the embedded engine: this process's host).
/* export query */
INTO OUTFILE {path:String} FORMAT Parquet
