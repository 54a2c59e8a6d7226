package slip_test

import (
	"context"
	"testing"
	"time"

	"rentapi/internal/slip"
	"rentapi/internal/slip/sliptest"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n-a-slip-")
	tests := []struct {
		name     string
		set      sliptest.Settings
		key      string
		rq       slip.Request
		outcome  slip.Outcome
		receiver string
		amount   int64
	}{
		{"verified by QR", sliptest.Settings{Mode: sliptest.Verified, Amount: 5200.5}, sliptest.Key,
			slip.Request{QRPayload: "004600060000010103014022000111"}, slip.Read, "xxx-xxx-1234", 520050},
		{"verified by image", sliptest.Settings{Mode: sliptest.Verified, Amount: 100}, sliptest.Key,
			slip.Request{Image: png}, slip.Read, "xxx-xxx-1234", 10000},
		{"wrong receiver", sliptest.Settings{Mode: sliptest.WrongReceiver}, sliptest.Key,
			slip.Request{QRPayload: "q"}, slip.Read, "xxx-x-x9876-x", 0},
		{"duplicate", sliptest.Settings{Mode: sliptest.Duplicate}, sliptest.Key, slip.Request{QRPayload: "q"}, slip.Duplicate, "", 0},
		{"unreadable", sliptest.Settings{Mode: sliptest.Unreadable}, sliptest.Key, slip.Request{Image: png}, slip.Unreadable, "", 0},
		{"down", sliptest.Settings{Mode: sliptest.Down}, sliptest.Key, slip.Request{QRPayload: "q"}, slip.Failed, "", 0},
		{"bad key", sliptest.Settings{Mode: sliptest.Verified}, "wrong", slip.Request{QRPayload: "q"}, slip.Failed, "", 0},
		{"slow", sliptest.Settings{Mode: sliptest.Slow, Delay: 10 * time.Millisecond}, sliptest.Key,
			slip.Request{QRPayload: "slow"}, slip.Read, "xxx-xxx-1234", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := sliptest.New(t)
			p.Set(tt.set)
			c, err := slip.New(p.URL, tt.key)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Verify(t.Context(), tt.rq)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.outcome || res.Reason == "" {
				t.Fatalf("outcome %v (%s), want %v", res.Outcome, res.Reason, tt.outcome)
			}
			if tt.outcome != slip.Read {
				return
			}
			r := res.Reading
			if r.TransRef != sliptest.Ref(tt.rq.QRPayload, tt.rq.Image) || r.SendingBank != "KBANK" || r.TransferredAt.IsZero() ||
				len(r.Receivers) != 1 || r.Receivers[0] != tt.receiver || (tt.amount != 0 && r.Amount != tt.amount) {
				t.Fatalf("reading %+v", r)
			}
		})
	}
}

func TestVerifyTimeout(t *testing.T) {
	t.Parallel()
	p := sliptest.New(t)
	p.Set(sliptest.Settings{Mode: sliptest.Slow, Delay: 5 * time.Second})
	c, err := slip.New(p.URL, sliptest.Key)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Verify(ctx, slip.Request{QRPayload: "q"}); err == nil {
		t.Fatal("a canceled verification returned no error")
	}
}

func TestDownThenUp(t *testing.T) {
	t.Parallel()
	p := sliptest.New(t)
	p.Set(sliptest.Settings{Mode: sliptest.Verified, Failures: 2})
	c, _ := slip.New(p.URL, sliptest.Key)
	var got []slip.Outcome
	for range 3 {
		res, err := c.Verify(t.Context(), slip.Request{QRPayload: "q"})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Outcome)
	}
	if got[0] != slip.Failed || got[1] != slip.Failed || got[2] != slip.Read || p.Calls() != 3 {
		t.Fatalf("outcomes %v after %d calls", got, p.Calls())
	}
}

func TestNew(t *testing.T) {
	if _, err := slip.New("ftp://x", "k"); err == nil {
		t.Fatal("ftp accepted")
	}
	if _, err := slip.New("", ""); err == nil {
		t.Fatal("no key accepted")
	}
	if _, err := slip.New("", "k"); err != nil {
		t.Fatal(err)
	}
}
