package balancer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// Client pushes state to the Lua side over the dynamic channel's unix
// socket. It is safe for concurrent use, but pushes should be serialised
// by the caller: a full replace is always applied, whatever its
// generation, so the last one sent wins.
type Client struct {
	http *http.Client
}

// APIError is a refusal from the Lua side: HTTP status and its message.
// 400 means the payload was invalid (the message names the field, e.g.
// "backends[3].endpoints: ..."), 409 that an Update or Delete was older
// than the current generation (a Replace never gets 409: resynchronise
// with one), 507 that the shared dict is too small, 413 that the body is
// over the server's client_max_body_size, 503 that another push held the
// lock too long (retry). The previous state stays in force in every case.
type APIError struct {
	StatusCode int
	Message    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message)
}

// NewClient returns a client for the dynamic server listening on
// socketPath. Deadlines come from the contexts passed to each call.
func NewClient(socketPath string) *Client {
	dialer := &net.Dialer{}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", socketPath)
		},
		MaxIdleConns:       2,
		DisableCompression: true,
	}
	return &Client{http: &http.Client{Transport: tr}}
}

// Close drops idle connections.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
}

type statePayload struct {
	Version    int       `json:"version"`
	Generation int64     `json:"generation"`
	Backends   []Backend `json:"backends"`
}

type updatePayload struct {
	Version    int       `json:"version"`
	Generation int64     `json:"generation"`
	Base       *int64    `json:"base,omitempty"`
	Backends   []Backend `json:"backends,omitempty"`
	Delete     []string  `json:"delete,omitempty"`
}

func wireBackends(bs []Backend) []Backend {
	out := make([]Backend, len(bs))
	for i, b := range bs {
		out[i] = b.wire()
	}
	return out
}

// Replace makes st the complete state: backends not in it are removed.
// It is applied whatever st.Generation and the current generation are
// (the generation is recorded, not compared), so the caller owns the
// state. It returns once every nginx worker will use the new state for
// its next request.
func (c *Client) Replace(ctx context.Context, st State) error {
	body, err := EncodeState(st)
	if err != nil {
		return err
	}
	return c.ReplaceEncoded(ctx, st.Generation, body)
}

// HashBackends is a digest of backends as a full-state push carries them
// (their JSON, in order): equal for equal backends, different whatever
// differs. It encodes one backend at a time, so that comparing 10,000
// backends with the last ones pushed does not build the megabytes of a
// whole push (and the encoder's buffer of twice that) first.
func HashBackends(backends []Backend) ([32]byte, error) {
	h := sha256.New()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, b := range backends {
		buf.Reset()
		if err := enc.Encode(b.wire()); err != nil { // ends with a newline: no two lists alike
			return [32]byte{}, fmt.Errorf("balancer: hash backends: %w", err)
		}
		h.Write(buf.Bytes())
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// EncodeState is the JSON of a full-state push; it is also what the state
// file that nginx loads at start holds.
func EncodeState(st State) ([]byte, error) {
	body, err := json.Marshal(stateHostsPayload{statePayload{SchemaVersion, st.Generation, wireBackends(st.Backends)},
		wireHosts(st.Hosts)})
	if err != nil {
		return nil, fmt.Errorf("balancer: encode state: %w", err)
	}
	return body, nil
}

// ReplaceEncoded pushes a state already encoded by EncodeState.
func (c *Client) ReplaceEncoded(ctx context.Context, generation int64, body []byte) error {
	if err := c.do(ctx, http.MethodPut, "/v1/state", body, nil); err != nil {
		return fmt.Errorf("balancer: replace state (generation %d): %w", generation, err)
	}
	return nil
}

// Update inserts or replaces the given backends and leaves all others
// as they are; generation becomes the state's generation. It is refused
// with 409 when generation is older than the current one: the base state
// is then not the caller's, and only a Replace resynchronises.
func (c *Client) Update(ctx context.Context, generation int64, backends ...Backend) error {
	body, err := json.Marshal(updatePayload{Version: SchemaVersion, Generation: generation, Backends: wireBackends(backends)})
	if err != nil {
		return fmt.Errorf("balancer: update backends: %w", err)
	}
	if err := c.do(ctx, http.MethodPost, "/v1/backends", body, nil); err != nil {
		return fmt.Errorf("balancer: update %s (generation %d): %w", keysOf(backends), generation, err)
	}
	return nil
}

// Patch upserts backends and removes the backends named in del, only if
// nginx's state is exactly generation base; generation becomes the
// state's generation. It is how a caller that knows the state it pushed
// last sends only the difference: on any other state (someone else's
// push, or a reload that loaded an older state file) nginx answers 409
// and changes nothing, and only a Replace resynchronises.
func (c *Client) Patch(ctx context.Context, base, generation int64, backends []Backend, del []string) error {
	body, err := EncodePatch(base, generation, backends, del)
	if err != nil {
		return err
	}
	return c.PatchEncoded(ctx, base, generation, body)
}

// EncodePatch is the JSON of a Patch.
func EncodePatch(base, generation int64, backends []Backend, del []string) ([]byte, error) {
	body, err := json.Marshal(updatePayload{Version: SchemaVersion, Generation: generation, Base: &base,
		Backends: wireBackends(backends), Delete: del})
	if err != nil {
		return nil, fmt.Errorf("balancer: encode patch: %w", err)
	}
	return body, nil
}

// PatchEncoded sends a patch already encoded by EncodePatch.
func (c *Client) PatchEncoded(ctx context.Context, base, generation int64, body []byte) error {
	if err := c.do(ctx, http.MethodPost, "/v1/backends", body, nil); err != nil {
		return fmt.Errorf("balancer: patch of generation %d to %d: %w", base, generation, err)
	}
	return nil
}

// Delete removes backends by key (unknown keys are ignored); generation
// becomes the state's generation.
func (c *Client) Delete(ctx context.Context, generation int64, keys ...string) error {
	body, err := json.Marshal(updatePayload{Version: SchemaVersion, Generation: generation, Delete: keys})
	if err != nil {
		return fmt.Errorf("balancer: delete backends: %w", err)
	}
	if err := c.do(ctx, http.MethodPost, "/v1/backends", body, nil); err != nil {
		return fmt.Errorf("balancer: delete %s (generation %d): %w", strings.Join(keys, ","), generation, err)
	}
	return nil
}

// ReplaceHosts makes hosts the whole hosts table (Host), leaving the
// backends alone: each request sees the old table or the new one, never
// a mixture. A full state (Replace, and the state file nginx loads at
// start) replaces the table too, and an Update or Patch never touches it,
// so keep State.Hosts what was last sent here.
func (c *Client) ReplaceHosts(ctx context.Context, hosts []Host) error {
	list := wireHosts(hosts)
	if list == nil {
		list = []Host{}
	}
	body, err := json.Marshal(hostsPayload{Hosts: list})
	if err != nil {
		return fmt.Errorf("balancer: encode hosts: %w", err)
	}
	if err := c.do(ctx, http.MethodPut, "/v1/hosts", body, nil); err != nil {
		return fmt.Errorf("balancer: replace hosts (%d): %w", len(hosts), err)
	}
	return nil
}

// CertificatesChanged tells nginx that certificate files were rewritten:
// each worker drops its parsed copies and reads the files again at the
// next handshake.
func (c *Client) CertificatesChanged(ctx context.Context) error {
	if err := c.do(ctx, http.MethodPost, "/v1/certificates", nil, nil); err != nil {
		return fmt.Errorf("balancer: certificates changed: %w", err)
	}
	return nil
}

// Generation returns the generation of the state nginx is serving (0 if
// nothing was pushed since nginx started), e.g. to notice that the state
// is no longer the one the caller pushed last.
func (c *Client) Generation(ctx context.Context) (int64, error) {
	var st struct {
		Generation int64 `json:"generation"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/generation", nil, &st); err != nil {
		return 0, fmt.Errorf("balancer: get generation: %w", err)
	}
	return st.Generation, nil
}

// State returns the state nginx is serving, as the Lua side normalised it
// (defaults filled in, addresses canonical, endpoints sorted).
func (c *Client) State(ctx context.Context) (State, error) {
	var st State
	if err := c.do(ctx, http.MethodGet, "/v1/state", nil, &st); err != nil {
		return State{}, fmt.Errorf("balancer: get state: %w", err)
	}
	return st, nil
}

func keysOf(bs []Backend) string {
	keys := make([]string, len(bs))
	for i, b := range bs {
		keys[i] = b.Key
	}
	return strings.Join(keys, ",")
}

// maxReply bounds what we read back; GET /v1/state is the largest reply.
const maxReply = 256 << 20

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// The host is ignored: the transport always dials the socket.
	req, err := http.NewRequestWithContext(ctx, method, "http://causeway"+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		} else if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return &APIError{StatusCode: resp.StatusCode, Message: msg}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode reply: %w", err)
		}
	}
	return nil
}

// IsRejected reports whether err is a refusal of the payload itself
// (invalid, older generation, too large for the shared dict or the body
// limit), where resending the same push cannot help. Transport errors
// (nginx not running or reloading) and 503 (another push in progress) are
// not refusals.
func IsRejected(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.StatusCode != http.StatusServiceUnavailable &&
		ae.StatusCode >= 400 && ae.StatusCode < 600
}
