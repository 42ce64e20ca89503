-- 010_schedules: a job with a schedule runs once per slot (cronguard.conf(5),
-- "Schedules"; doc/architecture.md, "Slots").
--   cronguard_runs.slot       the scheduled instant the run is for (UTC, the
--                             session's zone); NULL for a job without a
--                             schedule or once_per.
--   cronguard_runs.slot_kind  why the slot ran: 'schedule' (the latest slot
--                             at launch), 'catch_up' (an older slot of
--                             catch_up = "all"), 'manual' (run --slot).
--   ix_runs_job_slot          the latest successful slot, and the successes
--                             of one slot, in one index probe each.
-- cronguard_job_pauses: one row per paused job, fleet-wide; job '*' pauses
--   every job (jobs pause --all).  until_at NULL: until jobs resume.
-- cronguard_job_acks: an operator's acknowledgement of a failed or ran-twice
--   slot (jobs ack), so that jobs check stops reporting it.
ALTER TABLE cronguard_runs
  ADD COLUMN slot      DATETIME(6) NULL,
  ADD COLUMN slot_kind VARCHAR(16) NULL,
  ADD KEY ix_runs_job_slot (job, outcome, slot);
CREATE TABLE cronguard_job_pauses (
  job        VARCHAR(191)  NOT NULL PRIMARY KEY,
  paused_at  DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  paused_by  VARCHAR(255)  NOT NULL,      -- user@host:pid
  reason     VARCHAR(1024) NULL,
  until_at   DATETIME(6)   NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE cronguard_job_acks (
  id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  job        VARCHAR(191)  NOT NULL,
  slot       DATETIME(6)   NOT NULL,      -- UTC, as cronguard_runs.slot
  acked_at   DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  acked_by   VARCHAR(255)  NOT NULL,      -- user@host:pid
  reason     VARCHAR(1024) NOT NULL,
  UNIQUE KEY uq_job_acks (job, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
