package jobs

import (
	"testing"
	"time"
)

// A send's run may take 30 s, but no more than half the rescue horizon: River
// rescues no running job before its own timeout, so a longer one would keep a
// send that died with its process waiting past the horizon.
func TestSendTimeoutFor(t *testing.T) {
	t.Parallel()
	for rescueAfter, want := range map[time.Duration]time.Duration{
		time.Minute: 30 * time.Second, time.Hour: 30 * time.Second, 8 * time.Second: 4 * time.Second, 3 * time.Second: 1500 * time.Millisecond,
	} {
		if got := sendTimeoutFor(rescueAfter); got != want {
			t.Errorf("rescue after %s: %s, want %s", rescueAfter, got, want)
		}
	}
}
