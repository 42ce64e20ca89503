-- 013_runs_done: the newest finished run of a job in one index dive
-- (jobs check, jobs list; doc/architecture.md, "Run records").
--   done              1 once the run finished (any outcome but 'running'),
--                     0 while it runs; computed, never written.
--   ix_runs_job_done  MAX(id) WHERE job = ? AND done = 1 reads one entry,
--                     where outcome <> 'running' read every finished run
--                     of the job.
-- Virtual: nothing is stored in the rows, only in the index.  Online
-- DDL: runs keep being recorded while the index is built.
ALTER TABLE cronguard_runs
  ADD COLUMN done TINYINT AS (outcome <> 'running') VIRTUAL,
  ADD KEY ix_runs_job_done (job, done, id);
