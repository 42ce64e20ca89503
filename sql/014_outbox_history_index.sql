-- 014_outbox_history_index: outbox list --status and outbox purge flat
-- in the table's history (cronguard(1), outbox list, outbox purge).
--   ix_outbox_status_sent  (status, sent_at, id).  A listing of one
--                          status reads the rows it prints, backwards
--                          on this index: sent_at is NULL in every row
--                          but a SENT one, so for those the order is id
--                          order, and SENT rows come the latest sent
--                          first.  A purge of SENT rows and its
--                          --dry-run count find the rows sent before
--                          the cutoff as one range of it, where they
--                          scanned the whole table.  (CANCELLED rows
--                          are found on ix_outbox_claimed, sql/002.)
-- Online DDL: applications keep inserting while the index is built.
ALTER TABLE outbox_messages
  ADD KEY ix_outbox_status_sent (status, sent_at, id),
  ALGORITHM = INPLACE, LOCK = NONE;
