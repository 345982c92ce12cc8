package testcert

import _ "embed"

// DHParams2048 is 2048-bit DH parameters as `openssl dhparam 2048` wrote
// them (a fixture: generating parameters takes seconds to minutes).
//
//go:embed dhparam2048.pem
var DHParams2048 []byte
