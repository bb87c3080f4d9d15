-- Sign-in attempts on one account take turns (issue 52, finding 5): once an account has failed
-- more than a few times, the next attempt may run only after `next_at`, and taking the turn is one
-- conditional update, so attempts from many addresses at once cannot all sleep and then all hash.
CREATE TABLE login_turns (
    account_key TEXT PRIMARY KEY,
    next_at BIGINT NOT NULL
);
