package database

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"time"
)

// checkpointer copies SQLite's write-ahead log into the database file from
// a connection of its own, every checkpointEvery, so that no write does
// it. Left to SQLite, the commit that takes the log past 1,000 pages
// checkpoints it then, while it still holds the one write connection:
// every writer behind it waited, and the write rate fell. A passive
// checkpoint runs beside the writer and the readers; SQLite starts the log
// over at the next write once all of it is in the database file.
type checkpointer struct {
	conn *sql.DB
	// writers is the writers' turn, which a checkpoint that restarts the
	// log holds (see restart).
	writers *group
	log     *slog.Logger
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// checkpointEvery is how often the log is copied; at a couple of thousand
// writes a second it holds a few megabytes by then.
const checkpointEvery = 200 * time.Millisecond

// walRestartFrames is the log's length (in pages) beyond which a
// checkpoint waits for readers and writers to let it restart the log:
// passive ones can fall behind when reads never stop.
const walRestartFrames = 16384

// startCheckpointer opens its connection to dsn and starts.
func startCheckpointer(dsn string, writers *group, log *slog.Logger) *checkpointer {
	c := &checkpointer{conn: sql.OpenDB(sqliteConnector{dsn}), writers: writers, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	c.conn.SetMaxOpenConns(1)
	c.conn.SetConnMaxLifetime(0)
	go c.run()
	return c
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		frames, err := c.checkpoint("PASSIVE")
		if err == nil && frames > walRestartFrames {
			err = c.restart()
		}
		if err != nil && !failing {
			c.log.Warn("sqlite checkpoint", "error", err.Error())
		}
		failing = err != nil
	}
}

// checkpoint runs one checkpoint in mode and returns the log's length.
func (c *checkpointer) checkpoint(mode string) (frames int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var busy, done int64
	err = c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &frames, &done)
	return frames, err
}

// restart checkpoints the whole log and waits for readers to let it
// start over, holding the writers' turn, after their open group is
// committed: SQLite keeps writers out of a restart anyway, and a writer
// it refused sleeps in its busy handler, in steps that grow to 100 ms
// (writes of 10 to 20 ms stalled for 60 to 120 ms at each restart); in
// the turn's queue they go on the moment it ends.
func (c *checkpointer) restart() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.writers.takeAlone(ctx); err != nil {
		return err
	}
	defer c.writers.leave()
	_, err := c.checkpoint("RESTART")
	return err
}

// Close stops the checkpoints and closes the connection.
func (c *checkpointer) Close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	return c.conn.Close()
}
