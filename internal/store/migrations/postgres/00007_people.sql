-- +goose Up
-- People who sign in to the web pages: developers at /portal, landlords at
-- /app. An email is one person of each kind; the password is kept only as
-- an argon2id hash.
CREATE TABLE people (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    email         TEXT NOT NULL,
    name          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    developer_id  TEXT REFERENCES developers (id),
    landlord_id   TEXT REFERENCES landlords (id),
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    UNIQUE (kind, email)
);

-- Sessions of the web pages, server-side: only a hash of the cookie's
-- token is kept. A session ends when idle too long, at its absolute
-- expiry, at sign-out, or when the password changes.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    person_id  TEXT NOT NULL REFERENCES people (id),
    created_at BIGINT NOT NULL,
    seen_at    BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_person ON sessions (person_id);

-- A consent page shown to a signed-in landlord. Its approval form names it
-- by a token (only a hash kept) and is taken once, from the session that
-- was shown it. portal marks the portal's own flow, which answers with a
-- code rather than a link.
CREATE TABLE consents (
    token_hash     TEXT PRIMARY KEY,
    session_hash   TEXT NOT NULL,
    application_id TEXT NOT NULL REFERENCES applications (id),
    landlord_id    TEXT NOT NULL REFERENCES landlords (id),
    redirect_uri   TEXT NOT NULL,
    state          TEXT NOT NULL,
    scopes         TEXT NOT NULL,
    portal         BOOLEAN NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    used_at        BIGINT
);

-- The portal's link flow: a developer's session starts it with a state;
-- the landlord's approval leaves a single-use code, exchanged by that same
-- session with that state within 5 minutes. Only hashes are kept.
CREATE TABLE portal_links (
    state_hash      TEXT PRIMARY KEY,
    session_hash    TEXT NOT NULL,
    application_id  TEXT NOT NULL REFERENCES applications (id),
    code_hash       TEXT UNIQUE,
    landlord_id     TEXT REFERENCES landlords (id),
    scopes          TEXT,
    code_expires_at BIGINT,
    created_at      BIGINT NOT NULL,
    used_at         BIGINT
);

ALTER TABLE applications ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN last_used_at;
ALTER TABLE applications DROP COLUMN description;
DROP TABLE portal_links;
DROP TABLE consents;
DROP INDEX sessions_person;
DROP TABLE sessions;
DROP TABLE people;
