package writequeue

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestWritten: a snapshot that predates our write is read as the write;
// one that caught up, a change since, or another object of the same name
// ends the memory of it.
func TestWritten(t *testing.T) {
	for _, tc := range []struct {
		name       string
		uid        types.UID
		rv         string
		wantStatus string
		wantRV     string
		remembered bool
	}{
		{"a snapshot from before the write reads as the write", "u", "7", "ours", "8", true},
		{"a snapshot that caught up is taken as it is", "u", "8", "snapshot", "8", false},
		{"a change since is taken as it is", "u", "9", "snapshot", "9", false},
		{"another object of that name is taken as it is", "v", "7", "snapshot", "7", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w Written[string]
			w.Record("ns/a", "u", "7", "8", "ours")
			s, rv := w.Current("ns/a", tc.uid, tc.rv, "snapshot")
			if s != tc.wantStatus || rv != tc.wantRV {
				t.Errorf("Current = %q at %q, want %q at %q", s, rv, tc.wantStatus, tc.wantRV)
			}
			if s, _ := w.Current("ns/a", "u", "7", "snapshot"); (s == "ours") != tc.remembered {
				t.Errorf("remembered afterwards: %v, want %v", s == "ours", tc.remembered)
			}
		})
	}
}

func TestWrittenKeepAndRecord(t *testing.T) {
	var w Written[string]
	if s, rv := w.Current("ns/a", "u", "7", "snapshot"); s != "snapshot" || rv != "7" {
		t.Errorf("nothing written: Current = %q at %q", s, rv)
	}
	w.Record("ns/a", "u", "7", "", "ours")
	if s, _ := w.Current("ns/a", "u", "7", "snapshot"); s != "snapshot" {
		t.Error("a write without its new resourceVersion was remembered")
	}
	w.Record("ns/a", "u", "7", "8", "ours")
	w.Record("ns/b", "v", "3", "4", "ours")
	w.Keep(map[types.UID]bool{"v": true})
	if s, _ := w.Current("ns/a", "u", "7", "snapshot"); s != "snapshot" {
		t.Error("the write to an object gone from the snapshot was kept")
	}
	if s, _ := w.Current("ns/b", "v", "3", "snapshot"); s != "ours" {
		t.Error("the write to an object still there was forgotten")
	}
	// The snapshot catches up: the last memory goes, and with it the
	// map, which would keep the room of its largest size.
	if s, rv := w.Current("ns/b", "v", "4", "caught up"); s != "caught up" || rv != "4" {
		t.Errorf("caught up: Current = %q at %q", s, rv)
	}
	if w.m != nil {
		t.Errorf("%d-entry map kept after the last write was forgotten", len(w.m))
	}
	w.Record("ns/c", "x", "1", "2", "ours")
	if s, _ := w.Current("ns/c", "x", "1", "snapshot"); s != "ours" {
		t.Error("a write after the map was dropped was not remembered")
	}
}
