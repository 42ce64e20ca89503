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
--                       4: a run of its job's was already there for a
--                          later slot (a catch-up inside an older gap);
--                       0 for none; NULL for a run written before
--                       this migration, by hand, or without a slot:
--                       jobs check then reads that job's runs one by
--                       one, as before.
--   slot_gap_from       the newest slot before this one that had a run
--                       when this one started (NULL: none): with flag
--                       1, the gap is the slots between the two, less
--                       the runs flagged 4 in it since.
--   ix_runs_flags       (slot_flags, slot, job): the flagged runs of a
--                       window, of every job, without the others (and
--                       the runs written without flags).
--   ix_runs_job_slot_at (job, slot): the slot before a run's, and a
--                       slot's runs, one dive each.
-- The columns are added in place (instantly where the server can), the
-- indexes online: applications keep writing meanwhile.
ALTER TABLE cronguard_runs
  ADD COLUMN slot_flags TINYINT UNSIGNED NULL,
  ADD COLUMN slot_gap_from DATETIME(6) NULL;
ALTER TABLE cronguard_runs
  ADD KEY ix_runs_flags (slot_flags, slot, job),
  ADD KEY ix_runs_job_slot_at (job, slot),
  ALGORITHM = INPLACE, LOCK = NONE;
