package webhookcert

import (
	"bytes"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

// testCA makes a CA valid from a minute before born until born+validity.
func testCA(t *testing.T, born time.Time, validity time.Duration) *authority {
	t.Helper()
	a, err := newAuthority(born, validity, nameSet{DNS: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func pemOf(a *authority) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.ca.Raw}))
}

const (
	// notACert is a well-formed PEM block whose content is no certificate.
	notACert = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"
	// brokenBlock is not even readable PEM (bad base64).
	brokenBlock = "-----BEGIN CERTIFICATE-----\n!!not base64!!\n-----END CERTIFICATE-----\n"
)

func TestMergeBundle(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ours := testCA(t, now, time.Hour)
	other := testCA(t, now, time.Hour)
	foreign := testCA(t, now.Add(-time.Hour), 24*time.Hour)
	expired := testCA(t, now.Add(-2*time.Hour), time.Hour)             // until now-1h
	justValid := testCA(t, now.Add(-time.Hour), time.Hour+time.Second) // until now+1s
	justExpired := testCA(t, now.Add(-time.Hour), time.Hour-time.Second)

	for _, tc := range []struct {
		name      string
		old       string
		ours      []*authority
		want      string
		malformed bool
	}{
		{name: "empty gets ours", old: "", ours: []*authority{ours}, want: pemOf(ours)},
		{name: "ours already there", old: pemOf(ours), ours: []*authority{ours}, want: pemOf(ours)},
		{
			name: "foreign kept first, ours after",
			old:  pemOf(foreign), ours: []*authority{ours},
			want: pemOf(foreign) + pemOf(ours),
		},
		{
			name: "two of ours, one present: order kept, the other appended",
			old:  pemOf(other) + pemOf(foreign), ours: []*authority{ours, other},
			want: pemOf(other) + pemOf(foreign) + pemOf(ours),
		},
		{
			name: "expired pruned, the one still valid for a second kept",
			old:  pemOf(expired) + pemOf(justValid) + pemOf(justExpired) + pemOf(ours),
			ours: []*authority{ours},
			want: pemOf(justValid) + pemOf(ours),
		},
		{
			name: "malformed blocks and comments kept untouched, even next to an expired cert",
			old:  "# the team's CA\n" + pemOf(foreign) + notACert + brokenBlock + pemOf(expired) + "trailing text",
			ours: []*authority{ours},
			want: "# the team's CA\n" + pemOf(foreign) + notACert + brokenBlock + "trailing text\n" + pemOf(ours),
			// brokenBlock is text to pem.Decode; notACert is a block that
			// does not parse: both count.
			malformed: true,
		},
		{
			name: "a comment alone is not malformed",
			old:  "# comment\n" + pemOf(ours), ours: []*authority{ours},
			want: "# comment\n" + pemOf(ours),
		},
		{
			name: "a bundle without a final newline",
			old:  strings.TrimSuffix(pemOf(foreign), "\n"), ours: []*authority{ours},
			want: pemOf(foreign) + pemOf(ours),
		},
		{
			name: "some other kind of block counts as malformed and stays",
			old:  "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", ours: []*authority{ours},
			want:      "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n" + pemOf(ours),
			malformed: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ders [][]byte
			for _, a := range tc.ours {
				ders = append(ders, a.ca.Raw)
			}
			got, malformed := mergeBundle([]byte(tc.old), ders, now)
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if malformed != tc.malformed {
				t.Errorf("malformed = %v, want %v", malformed, tc.malformed)
			}
			// Merging again changes nothing.
			again, _ := mergeBundle(got, ders, now)
			if !bytes.Equal(again, got) {
				t.Errorf("second merge changed the bundle:\n%s", again)
			}
		})
	}
}

func TestSplitBundleKeepsEveryByte(t *testing.T) {
	now := time.Now()
	a, b := testCA(t, now, time.Hour), testCA(t, now, time.Hour)
	for _, s := range []string{
		"",
		"junk only",
		pemOf(a),
		"\n\n" + pemOf(a) + "\r\n" + notACert + "x" + brokenBlock + pemOf(b) + "tail",
		strings.TrimSuffix(pemOf(a), "\n"),
	} {
		var joined []byte
		for _, p := range splitBundle([]byte(s)) {
			joined = append(joined, p.raw...)
		}
		if string(joined) != s {
			t.Errorf("split and joined:\n%q\nwant\n%q", joined, s)
		}
	}
}

func TestBundleHas(t *testing.T) {
	now := time.Now()
	a, b := testCA(t, now, time.Hour), testCA(t, now, time.Hour)
	bundle := []byte(brokenBlock + pemOf(a) + notACert)
	if !bundleHas(bundle, a.ca.Raw) {
		t.Error("a not found")
	}
	if bundleHas(bundle, b.ca.Raw) {
		t.Error("b found")
	}
	if bundleHas(nil, a.ca.Raw) {
		t.Error("found in nil")
	}
}
