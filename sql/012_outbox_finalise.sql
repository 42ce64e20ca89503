-- 012_outbox_finalise: a finalise with its attempt log in one round trip
-- (cronguard-outbox(7), ATTEMPT LOG).  cronguard_finalise(p_delete,
-- p_update, p_expected, p_attempts) runs, in one transaction of its own:
-- the DELETE of the sent rows ('' for none: keep_sent on) and the UPDATE
-- of the others ('' for none), both fenced by id, claim token and
-- status as the caller built them; when together they matched
-- p_expected rows, the INSERT of the attempt rows ('' for none) and
-- COMMIT, else ROLLBACK (a row was lost to another worker: the caller
-- then finalises statement by statement, which finds which).  It answers
-- with one row: 1 committed, 0 rolled back.  Any error rolls back and is
-- raised again.
-- The statements are text the caller built with every value escaped
-- (db_format); the procedure adds nothing to them and runs nothing else.
-- Needs EXECUTE on the schema; without it (or before this migration)
-- cronguard finalises statement by statement (START TRANSACTION,
-- DELETE, UPDATE, INSERT, COMMIT) and logs why once.
-- cronguard_finalise_step(p_sql, p_rows) runs one of them ('' : none)
-- and adds the rows it changed to p_rows.
DROP PROCEDURE IF EXISTS cronguard_finalise_step;
CREATE PROCEDURE cronguard_finalise_step(IN p_sql LONGTEXT,
    INOUT p_rows BIGINT UNSIGNED)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
  COMMENT 'cronguard: one statement of cronguard_finalise'
BEGIN
  IF p_sql <> '' THEN
    SET @cronguard_finalise_sql = p_sql;
    PREPARE cronguard_finalise_stmt FROM @cronguard_finalise_sql;
    EXECUTE cronguard_finalise_stmt;
    SET p_rows = p_rows + ROW_COUNT();
    DEALLOCATE PREPARE cronguard_finalise_stmt;
    SET @cronguard_finalise_sql = NULL;
  END IF;
END;
DROP PROCEDURE IF EXISTS cronguard_finalise;
CREATE PROCEDURE cronguard_finalise(IN p_delete LONGTEXT,
    IN p_update LONGTEXT, IN p_expected BIGINT UNSIGNED,
    IN p_attempts LONGTEXT)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
  COMMENT 'cronguard: a finalise and its attempt rows in one transaction'
BEGIN
  DECLARE v_matched BIGINT UNSIGNED DEFAULT 0;
  DECLARE v_inserted BIGINT UNSIGNED DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  CALL cronguard_finalise_step(p_delete, v_matched);
  CALL cronguard_finalise_step(p_update, v_matched);
  IF v_matched = p_expected THEN
    CALL cronguard_finalise_step(p_attempts, v_inserted);
    COMMIT;
    SELECT 1;
  ELSE
    ROLLBACK;
    SELECT 0;
  END IF;
END;
