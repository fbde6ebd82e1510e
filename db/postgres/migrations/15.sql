-- Version 14 to 15: a destination's pause threshold
-- (IDEMHOOK_<P>_FORWARD_PAUSE_AFTER) is stored with its other limits,
-- so that every process pauses it after the same number of failures and
-- idemhook check can say when a process's setting differs.  3 is the
-- setting's default; the next claim writes the process's own.
ALTER TABLE destinations ADD COLUMN IF NOT EXISTS pause_after BIGINT NOT NULL
    DEFAULT 3;
