-- 008_runs_output: what issue 11 keeps with a run record.
--   run_uuid      the run's id for ping URLs (rid=, healthchecks.io
--                 convention) and for operators; set when the run starts.
--   output        the last output_max bytes of the job's interleaved
--                 stdout and stderr (output = "capture" or "on_failure");
--                 NULL when the output was not captured.
--   output_bytes  how many bytes the job wrote in all (output holds the
--                 tail when this is larger than output's length).
--   ix_runs_started keeps `jobs purge --before` and keep_runs from
--                 scanning the table.
ALTER TABLE cronguard_runs
  ADD COLUMN run_uuid     CHAR(36)        NULL,
  ADD COLUMN output       MEDIUMBLOB      NULL,
  ADD COLUMN output_bytes BIGINT UNSIGNED NULL,
  ADD KEY ix_runs_started (started_at);
