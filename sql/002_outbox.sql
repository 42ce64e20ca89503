-- 002_outbox: the transactional outbox (CONTRACT section 6.1).  Applications
-- insert into it in the same transaction as their business change; the
-- column names and meanings are a public interface: never rename.
CREATE TABLE outbox_messages (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  message_id      CHAR(36)     NOT NULL DEFAULT (UUID()),  -- stable across retries: consumers dedupe on it
  channel         VARCHAR(64)  NOT NULL,
  event_type      VARCHAR(128) NOT NULL,
  ordering_key    VARCHAR(191) NULL,
  payload         JSON         NOT NULL,
  status          ENUM('PENDING','PROCESSING','SENT','FAILED') NOT NULL DEFAULT 'PENDING',
  attempts        INT UNSIGNED NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  claim_token     CHAR(36)     NULL,
  claimed_by      VARCHAR(255) NULL,   -- host:pid
  claimed_at      DATETIME(6)  NULL,
  last_error      TEXT         NULL,
  created_at      DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  sent_at         DATETIME(6)  NULL,
  UNIQUE KEY uq_outbox_message_id (message_id),
  KEY ix_outbox_due (status, next_attempt_at),
  KEY ix_outbox_claimed (status, claimed_at),
  KEY ix_outbox_ordering (ordering_key, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
