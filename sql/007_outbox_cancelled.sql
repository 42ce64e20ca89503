-- 007_outbox_cancelled: the CANCELLED status (outbox cancel).  An operator
-- cancels a PENDING or FAILED row that must never be sent (a misspelt
-- channel, a message made obsolete): it is kept for the record, never
-- blocks its ordering key, and is purged like SENT rows.  claimed_by and
-- claimed_at record who cancelled it and when; last_error the reason.
-- Appending a value to an ENUM is a change of metadata only on MySQL 8.0
-- and MariaDB 10.6 (no table copy).
ALTER TABLE outbox_messages
  MODIFY status ENUM('PENDING','PROCESSING','SENT','FAILED','CANCELLED')
    NOT NULL DEFAULT 'PENDING',
  ALGORITHM = INPLACE, LOCK = NONE;
