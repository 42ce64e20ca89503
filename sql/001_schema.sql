-- 001_schema: the table in which "cronguard db migrate" records every
-- migration it applied.  migrate creates it with this very statement
-- before it reads it (src/migrate.c), so this file documents it.
CREATE TABLE IF NOT EXISTS cronguard_schema (
  version    INT UNSIGNED NOT NULL PRIMARY KEY,  -- NNN of sql/NNN_name.sql
  name       VARCHAR(255) NOT NULL,              -- name of sql/NNN_name.sql
  checksum   CHAR(64)     NOT NULL,              -- hex SHA-256 of the file
  applied_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6)  -- UTC, DB clock
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
