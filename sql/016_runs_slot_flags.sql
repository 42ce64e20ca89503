-- 016_runs_slot_flags: what jobs check needs of a scheduled job's long
-- history, written with each run, so that judging 1,000 jobs does not
-- read the 1,000,000 runs of their look-back windows (cronguard(1), jobs
-- check; doc/architecture.md, "Missed slots from the runs' flags").
--   slot_flags          for a run with a slot, written with it:
--                       1: the schedule's slot before this one had no
--                          run when this one started (a gap ends here);
--                       2: started while a run of its slot, not started
--                          by run --slot, was running or had succeeded
--                          (the slot may have run twice);
--                       0 for neither; NULL for a run written before
--                       this migration, by hand, or without a slot:
--                       jobs check then reads that job's runs one by
--                       one, as before.
--   ix_runs_job_flags   (job, slot_flags, slot): a job's flagged runs
--                       in its window, without the others.
--   ix_runs_job_slot_at (job, slot): the run before a flagged one, and
--                       a slot's runs, one dive each.
-- The column is added in place (instantly where the server can), the
-- indexes online: applications keep writing meanwhile.
ALTER TABLE cronguard_runs
  ADD COLUMN slot_flags TINYINT UNSIGNED NULL;
ALTER TABLE cronguard_runs
  ADD KEY ix_runs_job_flags (job, slot_flags, slot),
  ADD KEY ix_runs_job_slot_at (job, slot),
  ALGORITHM = INPLACE, LOCK = NONE;
