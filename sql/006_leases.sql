-- 006_leases: one row per lock name for guard = "lease" (issue 10), and
-- the fencing counter both guards hand to a job.  A lease is held while
-- owner_token is set and expires_at is later than NOW(6) by the DATABASE
-- clock; hosts' clocks are never compared.  fence only grows: every
-- acquisition (lease or named lock) runs
--   INSERT ... ON DUPLICATE KEY UPDATE fence = fence + 1
-- so a token is never reused, not even after the row is released, and
-- it survives restarts because it lives in the row.  Plain InnoDB with a
-- primary key: the row replicates under Galera and Group Replication,
-- where a certification conflict on the acquire means "busy".
CREATE TABLE IF NOT EXISTS cronguard_leases (
  name          VARCHAR(64)     NOT NULL,
  owner_token   CHAR(32)            NULL,
  holder_host   VARCHAR(255)        NULL,
  holder_pid    BIGINT UNSIGNED     NULL,
  holder_conn   BIGINT UNSIGNED     NULL,
  acquired_at   DATETIME(6)         NULL,
  expires_at    DATETIME(6)         NULL,
  fence         BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The fencing token each run was given, in its run record (NULL for a
-- run without a lock).  The lease holder lookup finds a holder's run by
-- (lock_name, fence).
ALTER TABLE cronguard_runs ADD COLUMN fence BIGINT UNSIGNED NULL,
  ADD KEY ix_runs_lock_fence (lock_name, fence);
