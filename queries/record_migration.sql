INSERT INTO schema_migrations (version, name) VALUES ({version:UInt32}, {name:String})
