// Package secret holds the server secret and everything derived from it: the
// fingerprints under which API keys are stored, and the sealing of
// pagination cursors. Every process over one database must load the same
// secret, or keys and cursors made by one are refused by another.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// minLen is the shortest secret accepted: 32 bytes of entropy as hex is 64
// characters, but an operator's own string of 32 characters is allowed.
const minLen = 32

// Secret is the loaded server secret's derived keys. The secret itself is
// not kept.
type Secret struct {
	fingerprint []byte
	// macs are HMACs keyed with fingerprint (*mac), reset and reused: a
	// key is fingerprinted at every request, and a new HMAC is two hashes
	// and their buffers.
	macs   *sync.Pool
	cursor cipher.AEAD
	// nonces is SealFixed's key for deriving a nonce from what it seals.
	nonces []byte
}

// New derives the keys from a secret string.
func New(s string) (*Secret, error) {
	s = strings.TrimSpace(s)
	if len(s) < minLen {
		return nil, fmt.Errorf("secret: the server secret must be at least %d characters", minLen)
	}
	derive := func(purpose string) []byte {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte(purpose))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("rentapi cursor v1"))
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	fingerprint := derive("rentapi api key fingerprint v1")
	macs := &sync.Pool{New: func() any { return &mac{Hash: hmac.New(sha256.New, fingerprint)} }}
	return &Secret{fingerprint: fingerprint, macs: macs, cursor: aead, nonces: derive("rentapi fixed nonce v1")}, nil
}

// Load reads the secret from path, or creates the file with a fresh random
// secret (mode 0600) when it does not exist. created reports the latter.
func Load(path string) (s *Secret, created bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		raw := make([]byte, 32)
		rand.Read(raw)
		text := hex.EncodeToString(raw)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, false, fmt.Errorf("secret: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return Load(path) // another process created it first
		}
		if err != nil {
			return nil, false, fmt.Errorf("secret: %w", err)
		}
		if _, err := f.WriteString(text + "\n"); err != nil {
			f.Close()
			return nil, false, fmt.Errorf("secret: %w", err)
		}
		if err := f.Close(); err != nil {
			return nil, false, fmt.Errorf("secret: %w", err)
		}
		s, err := New(text)
		return s, true, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("secret: %w", err)
	}
	s, err = New(string(b))
	return s, false, err
}

// mac is a reused HMAC with the buffer a key's text is copied into for
// it (written as a string, the text was copied anew each time), cleared
// once hashed: a pooled buffer does not keep the last key.
type mac struct {
	hash.Hash
	text []byte
}

// Fingerprint is what is stored of an API key: HMAC-SHA256 under the server
// secret, so a leaked table cannot be tested against guessed keys offline.
func (s *Secret) Fingerprint(apiKey string) string {
	m := s.macs.Get().(*mac)
	m.Reset()
	m.text = append(m.text[:0], apiKey...)
	m.Write(m.text)
	clear(m.text)
	var sum [sha256.Size]byte
	var text [2 * sha256.Size]byte
	m.Sum(sum[:0])
	s.macs.Put(m)
	hex.Encode(text[:], sum[:])
	return string(text[:])
}

// Seal encrypts and authenticates plaintext, bound to context: Open with any
// other context fails. The result is URL-safe base64.
func (s *Secret) Seal(plaintext, context []byte) string {
	nonce := make([]byte, s.cursor.NonceSize(), s.cursor.NonceSize()+len(plaintext)+s.cursor.Overhead())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(s.cursor.Seal(nonce, nonce, plaintext, context))
}

// SealFixed is Seal with the nonce derived from the plaintext and the
// context (HMAC-SHA256 under a key of its own) rather than drawn at random:
// the same value in the same context seals to the same string every time,
// and Open opens it as any sealed value. A list page's next_cursor is
// sealed so, which keeps the page the same bytes, and its ETag the same,
// for as long as its data is (a random nonce made every page with more
// pages answer anew, and never 304). The string shows only whether two
// sealed values are equal; different ones never share a nonce but by an
// HMAC collision.
func (s *Secret) SealFixed(plaintext, context []byte) string {
	m := hmac.New(sha256.New, s.nonces)
	m.Write(context)
	m.Write([]byte{0})
	m.Write(plaintext)
	nonce := append(make([]byte, 0, s.cursor.NonceSize()+len(plaintext)+s.cursor.Overhead()), m.Sum(nil)[:s.cursor.NonceSize()]...)
	return base64.RawURLEncoding.EncodeToString(s.cursor.Seal(nonce, nonce, plaintext, context))
}

// ErrTampered is returned by Open for anything not sealed by Seal under the
// same secret and context.
var ErrTampered = errors.New("secret: sealed value is invalid")

// Open reverses Seal.
func (s *Secret) Open(sealed string, context []byte) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.cursor.NonceSize()+s.cursor.Overhead() {
		return nil, ErrTampered
	}
	n := s.cursor.NonceSize()
	out, err := s.cursor.Open(b[n:n], b[:n], b[n:], context) // in place: b is ours
	if err != nil {
		return nil, ErrTampered
	}
	return out, nil
}
