-- 003_runs: one row per guarded job run (CONTRACT section 5.3).
-- Times come from the database clock (DATETIME(6), session time zone UTC).
-- outcome: running | success | failure | timeout | killed | lock_lost |
--          incident | error
CREATE TABLE cronguard_runs (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  job            VARCHAR(191) NOT NULL,
  lock_name      VARCHAR(191) NULL,        -- NULL for guard "local"/"none"
  host           VARCHAR(255) NOT NULL,
  pid            INT UNSIGNED NOT NULL,
  connection_id  BIGINT UNSIGNED NULL,     -- the lock session's CONNECTION_ID()
  started_at     DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  heartbeat_at   DATETIME(6)  NULL,
  finished_at    DATETIME(6)  NULL,
  outcome        VARCHAR(16)  NOT NULL DEFAULT 'running',
  exit_status    INT          NULL,        -- the job's own status (128+N: signal N)
  error          TEXT         NULL,
  KEY ix_runs_job (job),                   -- last run per job (job, id)
  KEY ix_runs_job_outcome (job, outcome, finished_at),  -- last success per job
  KEY ix_runs_lock (lock_name, outcome, connection_id)  -- running run for a lock
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
