-- 009_named_lock_fence: the named-lock guard's GET_LOCK and its fencing
-- token in one round trip (issue 10).  cronguard_get_lock(name) takes
-- GET_LOCK(name, 0) and, only when that returned 1 on a server that is
-- not a Galera node, bumps the lock's counter in cronguard_leases (006)
-- exactly as a lease acquisition does, so both guards share one counter
-- that only grows.  It answers with one row:
--   GET_LOCK's value, CONNECTION_ID(), @@session.wait_timeout,
--   @@wsrep_on (NULL on MySQL, which has no such variable), the token
--   (NULL when none was taken).
-- A procedure rather than a multi-statement batch or INSERT ... SELECT:
-- the counter is written only after the lock is held, the caller still
-- sees GET_LOCK's exact answer, and the statements it logs under
-- statement-based replication are plain INSERTs with constant values.
-- On a Galera node nothing is written: the guard refuses (or, with
-- guard = "auto", takes the lease) on seeing wsrep_on.  The /*M! ... */
-- line runs on MariaDB only; MySQL keeps it a comment.
-- Runtime needs EXECUTE on the schema; without it (or before this
-- migration) cronguard falls back to a second statement and logs why.
DROP PROCEDURE IF EXISTS cronguard_get_lock;
CREATE PROCEDURE cronguard_get_lock(IN p_name VARCHAR(64))
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
  COMMENT 'cronguard: GET_LOCK(p_name, 0) and the next fencing token'
BEGIN
  DECLARE v_got INT DEFAULT NULL;
  DECLARE v_wsrep INT DEFAULT NULL;
  DECLARE v_fence BIGINT UNSIGNED DEFAULT NULL;
  SET v_got = GET_LOCK(p_name, 0);
  /*M! SET v_wsrep = @@wsrep_on; */
  IF v_got = 1 AND COALESCE(v_wsrep, 0) = 0 THEN
    INSERT INTO cronguard_leases (name, fence)
      VALUES (p_name, LAST_INSERT_ID(1))
      ON DUPLICATE KEY UPDATE fence = LAST_INSERT_ID(fence + 1);
    SET v_fence = LAST_INSERT_ID();
  END IF;
  SELECT v_got, CONNECTION_ID(), @@session.wait_timeout, v_wsrep, v_fence;
END;
