-- 005: late results. A trial the service gave up on (ABANDONED as "superseded" after its generation's
-- update, or "study_completed") still takes the result of the client that was evaluating it: the
-- trial becomes COMPLETED and its value joins the model's data like an external observation. `late`
-- records that, since the failure_reason that said why the service gave up is cleared then.
ALTER TABLE trials ADD COLUMN late INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1));
