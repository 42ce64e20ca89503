-- 005_outbox_ordering_status: the per-key ordering check of the claim
-- (CONTRACT 6.5) asks whether a key has an earlier PENDING, PROCESSING or
-- FAILED row.  On ix_outbox_ordering (ordering_key, id) that walks the
-- key's whole history, SENT rows included, reading each row to see its
-- status; on (ordering_key, status, id) it reads three short ranges of
-- the index alone, however many SENT rows the key has.  The contract's
-- keys stay: applications and monitoring may rely on them.  Online DDL:
-- applications keep inserting while the index is built.
ALTER TABLE outbox_messages
  ADD KEY ix_outbox_ordering_status (ordering_key, status, id),
  ALGORITHM = INPLACE, LOCK = NONE;
