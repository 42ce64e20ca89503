-- 015_outbox_phase_index: the history index of sql/014 without its cost
-- to the claim (cronguard(1), outbox list, outbox purge).
--   phase                 OPEN while a row waits or is being sent
--                         (PENDING, PROCESSING), else its status (SENT,
--                         FAILED, CANCELLED); computed, never written.
--   ix_outbox_phase_sent  (phase, sent_at, id), in place of
--                         ix_outbox_status_sent (status, sent_at, id),
--                         whose leading status changed at every claim
--                         and finalise: the claim leaves this entry as
--                         it is, only the finalise moves it, once.
--                         A listing of one status reads the rows it
--                         prints, backwards on its phase (a PENDING
--                         listing skips the rows being sent, no more);
--                         sent_at is NULL in every row but a SENT one,
--                         so for the others the order is id order, and
--                         SENT rows come the latest sent first.  A purge
--                         of SENT rows and its --dry-run count find the
--                         rows sent before the cutoff as one range of
--                         it, FAILED ones their phase in id order.
--                         (PROCESSING rows are listed, and CANCELLED
--                         ones purged, on ix_outbox_claimed, sql/002.)
-- Virtual: nothing is stored in the rows, only in the index.  Online DDL,
-- applications keep inserting meanwhile: adding a virtual column changes
-- only the table's definition, but MySQL does it in place only alone in
-- its statement, hence two.
ALTER TABLE outbox_messages
  ADD COLUMN phase VARCHAR(10)
    AS (IF(status IN ('PENDING', 'PROCESSING'), 'OPEN', status)) VIRTUAL,
  ALGORITHM = INPLACE, LOCK = NONE;
ALTER TABLE outbox_messages
  ADD KEY ix_outbox_phase_sent (phase, sent_at, id),
  DROP KEY ix_outbox_status_sent,
  ALGORITHM = INPLACE, LOCK = NONE;
