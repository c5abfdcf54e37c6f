SELECT version FROM schema_migrations FINAL ORDER BY version
