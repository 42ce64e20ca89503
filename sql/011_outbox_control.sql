-- 011_outbox_control: delivery an operator can explain and control
-- (cronguard-outbox(7), "ORDERING", "PAUSING A CHANNEL", "ATTEMPT LOG").
--   ix_outbox_ordering_channel  the claim's per-key check with
--                               outbox.ordering_scope = "channel": three
--                               short ranges of the index alone per row,
--                               however long the key's history.
-- cronguard_channel_pauses: one row per paused channel, fleet-wide; the
--   claim statement leaves a paused channel's rows alone.  until_at NULL:
--   until outbox resume.
-- outbox_attempts: one row per attempt whose outcome a finalise recorded,
--   written in the finalise's transaction.  status_code: the HTTP status,
--   SMTP reply code or AMQP reply code; NULL for a transport error.
--   detail: the error or the start of the answer, at most 1 KiB.
-- outbox_messages.expires_at: a row not sent by then (database clock) is
--   never sent: the claim that reaches it makes it FAILED "expired ...".
--   NULL: the channel's ttl after created_at, or never.
ALTER TABLE outbox_messages
  ADD COLUMN expires_at DATETIME(6) NULL,
  ADD KEY ix_outbox_ordering_channel (ordering_key, channel, status, id),
  ALGORITHM = INPLACE, LOCK = NONE;
CREATE TABLE cronguard_channel_pauses (
  channel    VARCHAR(64)   NOT NULL PRIMARY KEY,
  paused_at  DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  paused_by  VARCHAR(255)  NOT NULL,      -- user@host:pid
  reason     VARCHAR(1024) NULL,
  until_at   DATETIME(6)   NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE outbox_attempts (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  outbox_id    BIGINT UNSIGNED NOT NULL,
  attempt      INT UNSIGNED    NOT NULL,
  started_at   DATETIME(6)     NOT NULL,
  duration_ms  INT UNSIGNED    NOT NULL,
  outcome      ENUM('SENT','RETRY','FAILED','RELEASED') NOT NULL,
  status_code  INT             NULL,
  detail       VARCHAR(1024)   NULL,
  dispatcher   VARCHAR(255)    NOT NULL,  -- host:pid
  claim_token  CHAR(36)        NOT NULL,
  KEY ix_attempts_outbox (outbox_id, id),
  KEY ix_attempts_token (claim_token)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
