package metrics

import (
	"strings"
	"testing"
)

func TestParseStubStatus(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       stubStatus
		err        string // substring of the error; "" means success
	}{
		{
			name: "nginx's page, trailing spaces and all",
			text: "Active connections: 3 \nserver accepts handled requests\n 16 15 31 \nReading: 1 Writing: 2 Waiting: 0 \n",
			want: stubStatus{Active: 3, Accepted: 16, Handled: 15, Requests: 31, Reading: 1, Writing: 2, Waiting: 0},
		},
		{
			name: "without the final newline",
			text: "Active connections: 1\nserver accepts handled requests\n 1 1 1\nReading: 0 Writing: 1 Waiting: 0",
			want: stubStatus{Active: 1, Accepted: 1, Handled: 1, Requests: 1, Writing: 1},
		},
		{
			name: "counters past 32 bits",
			text: "Active connections: 0\nserver accepts handled requests\n 5000000000 5000000000 9000000000\nReading: 0 Writing: 0 Waiting: 0\n",
			want: stubStatus{Accepted: 5e9, Handled: 5e9, Requests: 9e9},
		},
		{name: "empty", text: "", err: "1 lines, want 4"},
		{
			name: "a line missing",
			text: "Active connections: 1\nserver accepts handled requests\n 1 1 1\n",
			err:  "3 lines, want 4",
		},
		{
			name: "an extra line",
			text: "Active connections: 1\nserver accepts handled requests\n 1 1 1\nReading: 0 Writing: 1 Waiting: 0\nextra\n",
			err:  "5 lines, want 4",
		},
		{
			name: "a different header",
			text: "Active connections: 1\nserver accepts handled requests dropped\n 1 1 1\nReading: 0 Writing: 1 Waiting: 0\n",
			err:  "line 2",
		},
		{
			name: "a renamed state",
			text: "Active connections: 1\nserver accepts handled requests\n 1 1 1\nReading: 0 Writing: 1 Idle: 0\n",
			err:  "line 4",
		},
		{
			name: "a number that is not one",
			text: "Active connections: x\nserver accepts handled requests\n 1 1 1\nReading: 0 Writing: 1 Waiting: 0\n",
			err:  "line 1",
		},
		{
			name: "a negative number",
			text: "Active connections: 1\nserver accepts handled requests\n 1 -1 1\nReading: 0 Writing: 1 Waiting: 0\n",
			err:  "line 3",
		},
		{
			name: "two counters instead of three",
			text: "Active connections: 1\nserver accepts handled requests\n 1 1\nReading: 0 Writing: 1 Waiting: 0\n",
			err:  "line 3",
		},
		{
			name: "an HTML error page",
			text: "<html>\n<head><title>404 Not Found</title></head>\n<body>\n</body>\n</html>\n",
			err:  "5 lines, want 4",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStubStatus(tc.text)
			checkParsed(t, got, err, tc.want, tc.err)
		})
	}
}

// checkParsed is the verdict of a parser table row: wantErr, when set, is
// a substring of the error expected; otherwise got must equal want.
func checkParsed[T comparable](t *testing.T, got T, err error, want T, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want one containing %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
