package modsec_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/modsec"
	"github.com/causeway/causeway/internal/render"
)

// TestParse: what ingress-nginx's documentation and users' snippets hold
// is read, and printed back as ModSecurity reads it.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // the printed directives
	}{
		{"engine on", "SecRuleEngine On", []string{"SecRuleEngine On"}},
		{"keywords in any case", "secruleengine on\nSECREQUESTBODYACCESS off", []string{"SecRuleEngine On", "SecRequestBodyAccess Off"}},
		{"comments and blank lines", "# prevention\n\n  SecRuleEngine DetectionOnly  \n#end", []string{"SecRuleEngine DetectionOnly"}},
		{"audit log to the output", "SecAuditLog /dev/stdout\nSecAuditLogFormat JSON\nSecAuditEngine RelevantOnly",
			[]string{"SecAuditLog /dev/stdout", "SecAuditLogFormat JSON", "SecAuditEngine RelevantOnly"}},
		{"relevant status regex", `SecAuditLogRelevantStatus "^(?:5|4(?!04))"`, []string{`SecAuditLogRelevantStatus "^(?:5|4(?!04))"`}},
		{"mime types", "SecResponseBodyMimeType text/plain application/json", []string{"SecResponseBodyMimeType text/plain application/json"}},
		{"remove by id, ranges and commas", "SecRuleRemoveById 942100 920300-920350,949110", []string{"SecRuleRemoveById 942100 920300-920350 949110"}},
		{"remove by tag", `SecRuleRemoveByTag "attack-sqli"`, []string{`SecRuleRemoveByTag "attack-sqli"`}},
		{"update target", `SecRuleUpdateTargetById 942100 "!ARGS:password|!REQUEST_COOKIES:/^session_/"`,
			[]string{`SecRuleUpdateTargetById 942100 "!ARGS:password|!REQUEST_COOKIES:/^session_/"`}},
		{"ingress-nginx's JSON body rule, continued over lines",
			"SecRule REQUEST_HEADERS:Content-Type \"application/json\" \\\n  \"id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON\"",
			[]string{`SecRule REQUEST_HEADERS:Content-Type "@rx application/json" "id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"`}},
		{"a plugin's exclusion rule", "SecRule REQUEST_FILENAME \"@contains /remote.php/webdav\" \\\n    \"id:9508102,\\\n    phase:1,\\\n    pass,\\\n    t:none,\\\n    nolog,\\\n    ver:'nextcloud-rule-exclusions-plugin/1.2.0',\\\n    ctl:ruleRemoveById=920420,\\\n    ctl:ruleRemoveById=941000-942999,\\\n    ctl:ruleRemoveByTag=attack-injection-php\"",
			[]string{`SecRule REQUEST_FILENAME "@contains /remote.php/webdav" "id:9508102,phase:1,pass,t:none,nolog,ver:'nextcloud-rule-exclusions-plugin/1.2.0',ctl:ruleRemoveById=920420,ctl:ruleRemoveById=941000-942999,ctl:ruleRemoveByTag=attack-injection-php"`}},
		{"a deny rule with a message holding commas", `SecRule ARGS:id "!@rx ^[0-9]+$" "id:1001,phase:2,deny,status:403,log,msg:'id must be numeric, nothing else'"`,
			[]string{`SecRule ARGS:id "!@rx ^[0-9]+$" "id:1001,phase:2,deny,status:403,log,msg:'id must be numeric, nothing else'"`}},
		{"a chain", "SecRule REQUEST_METHOD \"@streq POST\" \"id:1002,phase:2,deny,chain\"\nSecRule &ARGS:token \"@eq 0\"",
			[]string{`SecRule REQUEST_METHOD "@streq POST" "id:1002,phase:2,deny,chain"`, `SecRule &ARGS:token "@eq 0"`}},
		{"setvar and skipAfter", `SecAction "id:1003,phase:1,pass,nolog,setvar:'tx.paranoia_level=2',skipAfter:END-CHECKS"` + "\nSecMarker END-CHECKS",
			[]string{`SecAction "id:1003,phase:1,pass,nolog,setvar:'tx.paranoia_level=2',skipAfter:END-CHECKS"`, "SecMarker END-CHECKS"}},
		{"default action", `SecDefaultAction "phase:2,log,auditlog,deny,status:403"`, []string{`SecDefaultAction "phase:2,log,auditlog,deny,status:403"`}},
		{"libinjection", `SecRule ARGS "@detectSQLi" "id:1004,phase:2,deny"`, []string{`SecRule ARGS "@detectSQLi" "id:1004,phase:2,deny"`}},
		{"includes of ingress-nginx's image", "Include /etc/nginx/modsecurity/modsecurity.conf\nInclude /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf\nSecRuleEngine On",
			[]string{"SecRuleEngine On"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := modsec.Parse(tc.src, modsec.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := render.SecRulesText(r)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestParseRefuses: every row names what reaches beyond the request: a
// file, a program, the network, the process; or what ModSecurity would
// refuse at load.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"debug log file", "SecDebugLog /tmp/modsec_debug.log", "SecDebugLog: is not allowed: it writes a file"},
		{"audit log file", "SecAuditLog /var/log/audit.log", "SecAuditLog: writes a file"},
		{"audit storage dir", "SecAuditLogStorageDir /var/log/audit/", "it writes files"},
		{"concurrent audit log", "SecAuditLogType Concurrent", "want Serial"},
		{"exec action", `SecRule ARGS "@rx x" "id:1,phase:2,exec:/bin/sh"`, `action "exec" is not allowed`},
		{"setenv", `SecAction "id:1,phase:1,setenv:LD_PRELOAD=/tmp/x.so"`, `action "setenv" is not allowed`},
		{"initcol writes the data dir", `SecAction "id:1,phase:1,initcol:ip=%{REMOTE_ADDR}"`, `action "initcol" is not allowed`},
		{"append", `SecAction "id:1,phase:1,append:'<script>'"`, `action "append" is not allowed`},
		{"setvar outside tx", `SecAction "id:1,phase:1,setvar:ip.blocked=1"`, "only the transaction collection"},
		{"pmFromFile reads a file", `SecRule ARGS "@pmFromFile /etc/shadow" "id:1,phase:2,deny"`, "operator @pmFromFile is not allowed"},
		{"inspectFile runs a program", `SecRule FILES "@inspectFile /bin/check" "id:1,phase:2,deny"`, "operator @inspectFile is not allowed"},
		{"rbl asks the network", `SecRule REMOTE_ADDR "@rbl bl.example" "id:1,phase:1,deny"`, "operator @rbl is not allowed"},
		{"the environment", `SecRule ENV:SECRET "@rx ." "id:1,phase:1,log,msg:'%{MATCHED_VAR}'"`, `variable "ENV" is not one`},
		{"remote rules", "SecRemoteRules key https://example.com/rules", "fetches rules from the network"},
		{"another include", "Include /etc/passwd", "may be included"},
		{"lua script", "SecRuleScript /tmp/x.lua", "it runs a script"},
		{"status engine", "SecStatusEngine On", "sends data out"},
		{"unknown directive", "SecFooBar On", "is not allowed in a modsecurity-snippet"},
		{"nginx directive", "proxy_pass http://evil;", "is not a ModSecurity directive"},
		{"rule without id", `SecRule ARGS "@rx x" "phase:2,deny"`, "has no id action"},
		{"duplicate id", `SecAction "id:5,phase:1,pass"` + "\n" + `SecAction "id:5,phase:1,pass"`, "id 5 is used twice"},
		{"reserved id", `SecAction "id:942100,phase:1,pass"`, "reserved"},
		{"dangling chain", `SecRule ARGS "@rx x" "id:1,phase:2,deny,chain"`, "the last rule has the chain action"},
		{"chain into a setting", `SecRule ARGS "@rx x" "id:1,phase:2,deny,chain"` + "\nSecRuleEngine On", "where a SecRule belongs"},
		{"quote in a message", `SecAction "id:1,phase:1,pass,msg:'it\'s'"`, "no quote"},
		{"newline in a quoted word", "SecAuditLogRelevantStatus \"^5\n\"", "past the end of the line"},
		{"control character", "SecRuleEngine On\x01", "control character"},
		{"unterminated quote", `SecRuleRemoveByTag "attack`, "not closed"},
		{"empty", "# nothing\n", "holds no directive"},
		{"engine value", "SecRuleEngine Maybe", `want On, Off, DetectionOnly`},
		{"update action", `SecRuleUpdateActionById 942100 "exec:/bin/sh"`, "not checked"},
		{"a brace in a key (ModSecurity fails on it)", `SecRuleUpdateTargetById 1 "!ARGS:a}"`, "want a name"},
		{"a variable in a key", `SecRule ARGS:${host} "@rx x" "id:1,phase:2,deny"`, "want a name"},
		{"a regular expression in a ctl target (ModSecurity 3.0.9 fails on it)", `SecAction "id:1,phase:1,pass,ctl:ruleRemoveTargetById=942100;ARGS:/^a/"`, "must be a name"},
		{"ipMatch of no address", `SecRule REMOTE_ADDR "@ipMatch nonsense" "id:1,phase:1,deny"`, "is no address or CIDR"},
		{"ctl debug log", `SecAction "id:1,phase:1,ctl:debugLogLevel=9"`, `ctl option "debugLogLevel" is not allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := modsec.Parse(tc.src, modsec.Options{Reserved: []model.SecIDRange{model.SecCRSIDs}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestTransactionID(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"$request_id", "${request_id}", true},
		{"${host}-$request_id", "${host}-${request_id}", true},
		{"static-id", "static-id", true},
		{"$ssl_client_cert", "", false},
		{"$request_id;", "", false},
		{"a b", "", false},
		{"", "", false},
		{strings.Repeat("a", 129), "", false},
	} {
		got, err := modsec.TransactionID(tc.in)
		if (err == nil) != tc.ok || tc.ok && got.String() != tc.want {
			t.Errorf("TransactionID(%q) = %q, %v", tc.in, got.String(), err)
		}
	}
}
