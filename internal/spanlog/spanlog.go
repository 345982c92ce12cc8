// Package spanlog is the contract between the nginx configuration (package
// render) and the controller's span exporter (package tracing): what a
// line of the span log carries, in which order, how a traced location
// names its span key, and how the controller reads a line back.
//
// A traced location sets Variable to a key naming its labels (no label
// ever appears in the nginx configuration), and nginx appends one line
// per sampled request to the span log: the Fields' values joined by a tab,
// escaped as JSON strings are (log_format escape=json), so no value holds
// a tab or a line break.
package spanlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/causeway/causeway/internal/model"
)

// Variable is the nginx variable (without '$') through which a traced
// location names its span key; "" where nothing is traced.
const Variable = "causeway_trace"

// RandomVariable holds the request's 16 random bytes, as 32 lower-case
// hex digits: a new trace's ID, and the span ID's source (render's maps).
const RandomVariable = "causeway_trace_random"

// ContextVariable holds the traceparent the backend receives: a traced
// request's own, "00-<trace-id>-<span-id>-<flags>" (the client's where
// the location is not traced).
const ContextVariable = "causeway_traceparent"

// Separator separates the fields of a line: escape=json writes a tab in a
// value as \t, so only the format's own tabs are raw.
const Separator = '\t'

// Fields are the nginx variables (without '$') of a line, in order.
var Fields = []string{
	Variable, ContextVariable, "http_traceparent", "msec", "request_time", "status", "request_method",
	"server_protocol", "scheme", "server_port", "remote_addr", "remote_port", "upstream_addr",
	"upstream_status", "host", "http_host", "uri", "request_uri", "http_user_agent",
}

// Labels are what a location's key stands for.
type Labels struct {
	// Namespace and Ingress name the object the location comes from
	// ("" for the controller's own locations).
	Namespace, Ingress string
	// Service and Port are the backend's; Upstream is ingress-nginx's
	// name for it ("namespace-service-port", "upstream-default-backend").
	Service, Port, Upstream string
	// Path is the location's path as the object wrote it.
	Path string
	// Host is the server's host: the rule's, "" in the catch-all server.
	Host string
	// Operation names the span; nil for Path.
	Operation model.OperationName
}

// Key is the key a location with these labels sets in Variable: its
// first byte says whether the location trusts an incoming traceparent
// ("t") or not ("u"), its second that the labels are its own ("d"), then
// a digest.
func Key(l Labels, trust bool) string {
	var b []byte
	for _, s := range []string{l.Namespace, l.Ingress, l.Service, l.Port, l.Upstream, l.Path, l.Host, l.Operation.String()} {
		b = append(append(b, s...), 0)
	}
	if l.Operation != nil {
		b = append(b, 1) // a name that is empty text is not none
	}
	sum := sha256.Sum256(b)
	return mode(trust) + "d" + hex.EncodeToString(sum[:8])
}

// SharedKey is the one key of a location of a shared server (render's
// server blocks that serve many alike hosts), whatever the host: the
// controller tells the hosts apart by the line's $host, one of the
// block's exact server names, through SharedEntry.
func SharedKey(trust bool, server string, location int) string {
	sum := sha256.Sum256([]byte(server + "\x00" + strconv.Itoa(location)))
	return mode(trust) + "s" + hex.EncodeToString(sum[:8])
}

func mode(trust bool) string {
	if trust {
		return "t"
	}
	return "u"
}

// SharedEntry is the controller's key for the requests to host of a
// shared key.
func SharedEntry(key, host string) string { return key + "\x00" + host }

// IsShared reports whether k is a SharedKey.
func IsShared(k string) bool { return len(k) > 1 && k[1] == 's' }

var keyRe = regexp.MustCompile(`^[tu][ds][0-9a-f]{16}$`)

// ValidKey reports whether k has Key's or SharedKey's form.
func ValidKey(k string) bool { return keyRe.MatchString(k) }

// Trusts reports whether key k's location continues a valid incoming
// traceparent.
func Trusts(k string) bool { return len(k) > 0 && k[0] == 't' }

// Record is one line read back: the values of Fields, unescaped.
type Record struct {
	// Context is ContextVariable's value; Incoming the request's
	// traceparent header as it came, whatever it holds.
	Key, Context, Incoming              string
	Msec, RequestTime                   string
	Status, Method, Protocol, Scheme    string
	ServerPort, RemoteAddr, RemotePort  string
	UpstreamAddr, UpstreamStatus        string
	Host, HTTPHost, URI, RequestURI, UA string
}

// ErrFields is a line with the wrong number of fields.
var ErrFields = errors.New("span log line has the wrong number of fields")

// Parse reads one line (without its line feed).
func Parse(line []byte) (Record, error) {
	var f [19]string
	if len(f) != len(Fields) {
		panic("spanlog: Fields and Record differ")
	}
	n := 0
	for {
		i := bytes.IndexByte(line, Separator)
		if n == len(f)-1 {
			if i >= 0 {
				return Record{}, ErrFields
			}
			i = len(line)
		} else if i < 0 {
			return Record{}, ErrFields
		}
		v, err := unescape(line[:i])
		if err != nil {
			return Record{}, fmt.Errorf("span log field %s: %w", Fields[n], err)
		}
		f[n] = v
		n++
		if i == len(line) {
			break
		}
		line = line[i+1:]
	}
	return Record{
		Key: f[0], Context: f[1], Incoming: f[2], Msec: f[3], RequestTime: f[4], Status: f[5], Method: f[6],
		Protocol: f[7], Scheme: f[8], ServerPort: f[9], RemoteAddr: f[10], RemotePort: f[11],
		UpstreamAddr: f[12], UpstreamStatus: f[13], Host: f[14], HTTPHost: f[15], URI: f[16],
		RequestURI: f[17], UA: f[18],
	}, nil
}

// unescape undoes nginx's escape=json (ngx_escape_json: \" \\ \n \r \t
// \b \f and \u00XX for the other bytes below 0x20) and makes the result
// valid UTF-8, as OTLP's strings must be: a client's bytes that are not
// become U+FFFD.
func unescape(b []byte) (string, error) {
	if bytes.IndexByte(b, '\\') < 0 {
		if utf8.Valid(b) {
			return string(b), nil
		}
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 >= len(b) {
			return "", errors.New("a trailing backslash")
		}
		i++
		switch b[i] {
		case '"', '\\', '/':
			out = append(out, b[i])
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			if i+4 >= len(b) || b[i+1] != '0' || b[i+2] != '0' {
				return "", errors.New(`a \u escape nginx does not write`)
			}
			v, err := strconv.ParseUint(string(b[i+3:i+5]), 16, 8)
			if err != nil || v >= 0x20 {
				return "", errors.New(`a \u escape nginx does not write`)
			}
			out = append(out, byte(v))
			i += 4
		default:
			return "", fmt.Errorf(`an escape \%c nginx does not write`, b[i])
		}
	}
	if !utf8.Valid(out) {
		out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
	}
	return string(out), nil
}
