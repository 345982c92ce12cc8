package model

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// This file is the grammar of the ModSecurity directives a snippet may
// hold (model.SecRules): package modsec reads snippets with it, and the
// renderer checks every directive again before printing it. What it
// leaves out is what could reach beyond the request being inspected:
// paths (logs, debug logs, upload and data directories, rule files),
// actions that run programs or change the process (exec, setenv, setuid),
// persistent collections that write files (initcol, setsid), operators
// that read files or ask the network (@pmFromFile, @inspectFile, @rbl),
// and remote rules.

// MaxSecRuleID bounds rule ids (ModSecurity's are below 10^8 in
// practice; the CRS's are six digits).
const MaxSecRuleID = 99999999

// Reserved rule ids: the base configuration's and the Core Rule Set's. A
// location's rules may not use them (they would collide with the rules
// inherited from the http level; nginx -t refuses duplicated ids).
var (
	SecBaseIDs = SecIDRange{200000, 200099}
	SecCRSIDs  = SecIDRange{900000, 999999}
)

// Contains reports whether id is in the range.
func (r SecIDRange) Contains(id int) bool { return id >= r.Lo && id <= r.Hi }

// maxSecText bounds a text value (a message, tag or operator argument).
const maxSecText = 1024

// secArgs checks a setting's arguments.
type secArgs func(args []string) error

// SecSettings are the settings a snippet may hold and their grammars, by
// ModSecurity's spelling of the name.
var SecSettings = map[string]secArgs{
	"SecRuleEngine":                 secOneOf("On", "Off", "DetectionOnly"),
	"SecRequestBodyAccess":          secOneOf("On", "Off"),
	"SecResponseBodyAccess":         secOneOf("On", "Off"),
	"SecRequestBodyLimit":           secIntArg(1, 1<<30),
	"SecRequestBodyNoFilesLimit":    secIntArg(1, 1<<30),
	"SecResponseBodyLimit":          secIntArg(1, 1<<30),
	"SecRequestBodyLimitAction":     secOneOf("Reject", "ProcessPartial"),
	"SecResponseBodyLimitAction":    secOneOf("Reject", "ProcessPartial"),
	"SecRequestBodyJsonDepthLimit":  secIntArg(1, 10000),
	"SecArgumentsLimit":             secIntArg(1, 100000),
	"SecPcreMatchLimit":             secIntArg(1, 10000000),
	"SecPcreMatchLimitRecursion":    secIntArg(1, 10000000),
	"SecResponseBodyMimeType":       secMIMETypes,
	"SecResponseBodyMimeTypesClear": secNoArgs,
	"SecAuditEngine":                secOneOf("On", "Off", "RelevantOnly"),
	"SecAuditLogParts":              secOneArg(checkAuditParts),
	"SecAuditLogRelevantStatus":     secOneArg(CheckSecText),
	"SecAuditLogFormat":             secOneOf("JSON", "Native"),
	"SecAuditLogType":               secOneOf("Serial"),
	// The audit log goes to the output of nginx, which the controller
	// forwards: no file of the node is named.
	"SecAuditLog":          secOneOf("/dev/stdout", "/dev/stderr"),
	"SecArgumentSeparator": secOneOf("&", ";"),
	"SecCookieFormat":      secOneOf("0", "1"),
	"SecWebAppId":          secOneArg(checkSecName),
}

func secNoArgs(args []string) error {
	if len(args) > 0 {
		return errors.New("takes no argument")
	}
	return nil
}

func secOneArg(check func(string) error) secArgs {
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("takes one argument, not %d", len(args))
		}
		return check(args[0])
	}
}

func secOneOf(values ...string) secArgs {
	return secOneArg(func(v string) error {
		if !slices.Contains(values, v) {
			return fmt.Errorf("%q: want %s", Truncate(v), strings.Join(values, ", "))
		}
		return nil
	})
}

func secIntArg(lo, hi int) secArgs {
	return secOneArg(func(v string) error {
		_, err := secInt(v, lo, hi)
		return err
	})
}

func secInt(v string, lo, hi int) (int, error) {
	if v == "" || len(v) > 10 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, fmt.Errorf("%q: want a number from %d to %d", Truncate(v), lo, hi)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q: want a number from %d to %d", Truncate(v), lo, hi)
	}
	return n, nil
}

func secMIMETypes(args []string) error {
	if len(args) == 0 {
		return errors.New("takes at least one MIME type")
	}
	types, err := ParseMIMETypes(strings.Join(args, " "))
	if err != nil {
		return err
	}
	if !slices.Equal(types, args) {
		return errors.New("want MIME types such as text/html")
	}
	return nil
}

// checkAuditParts: the audit log's parts, letters A to K and Z, each once.
func checkAuditParts(v string) error {
	if v == "" || len(v) > 12 {
		return fmt.Errorf("%q: want audit log parts such as ABFHZ", Truncate(v))
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'K' || c == 'Z') || strings.IndexByte(v[:i], c) >= 0 {
			return fmt.Errorf("%q: want audit log parts such as ABFHZ, each once", Truncate(v))
		}
	}
	return nil
}

// checkSecName is a label: a marker, a web application id, a ctl's
// argument: 1 to 128 letters, digits, ".", "_", "-".
func checkSecName(v string) error {
	if v == "" || len(v) > 128 {
		return fmt.Errorf("%q: want 1 to 128 letters, digits, '.', '_' and '-'", Truncate(v))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%q: want 1 to 128 letters, digits, '.', '_' and '-'", Truncate(v))
		}
	}
	return nil
}

// checkSecTag is a tag named in a ctl action, printed unquoted: as
// checkSecName, and "/" (the CRS's tags are such as
// attack-sqli and OWASP_CRS/WEB_ATTACK/SQL_INJECTION).
func checkSecTag(v string) error {
	if err := checkSecName(strings.ReplaceAll(v, "/", "_")); err != nil {
		return fmt.Errorf("%q: want 1 to 128 letters, digits, '.', '_', '-' and '/'", Truncate(v))
	}
	return nil
}

// CheckSecMarker checks SecMarker's label and skipAfter's.
func CheckSecMarker(v string) error { return checkSecName(v) }

// CheckSecText checks a text value: a message, a tag, an operator's
// argument, a regular expression. It is printed between quotes, so it
// may hold neither kind of quote nor a control character, and may not end
// with a backslash (which would escape the closing quote).
func CheckSecText(v string) error {
	switch {
	case v == "":
		return errors.New("empty value")
	case len(v) > maxSecText:
		return fmt.Errorf("value of %d bytes is longer than %d", len(v), maxSecText)
	case strings.ContainsAny(v, `"'`):
		return fmt.Errorf("%q: a value may hold no quote", Truncate(v))
	case strings.HasSuffix(v, `\`):
		return fmt.Errorf("%q: a value may not end with a backslash", Truncate(v))
	}
	for _, c := range v {
		if c < ' ' || c == 0x7f {
			return fmt.Errorf("%q: a value may hold no control character", Truncate(v))
		}
	}
	return nil
}

// CheckSecSetting checks a setting's name and arguments.
func CheckSecSetting(s SecSetting) error {
	check, ok := SecSettings[s.Name]
	if !ok {
		return fmt.Errorf("directive %s is not allowed", Truncate(s.Name))
	}
	if err := check(s.Args); err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	return nil
}

// SecVariables are the variables and collections a rule may inspect. ENV
// (the process's environment) and the persistent collections are left
// out.
var SecVariables = toSet("ARGS", "ARGS_COMBINED_SIZE", "ARGS_GET", "ARGS_GET_NAMES", "ARGS_NAMES", "ARGS_POST",
	"ARGS_POST_NAMES", "AUTH_TYPE", "DURATION", "FILES", "FILES_COMBINED_SIZE", "FILES_NAMES", "FILES_SIZES",
	"FULL_REQUEST", "FULL_REQUEST_LENGTH", "HIGHEST_SEVERITY", "INBOUND_DATA_ERROR", "MATCHED_VAR",
	"MATCHED_VARS", "MATCHED_VARS_NAMES", "MATCHED_VAR_NAME", "MULTIPART_BOUNDARY_QUOTED",
	"MULTIPART_BOUNDARY_WHITESPACE", "MULTIPART_CRLF_LF_LINES", "MULTIPART_DATA_AFTER", "MULTIPART_DATA_BEFORE",
	"MULTIPART_FILE_LIMIT_EXCEEDED", "MULTIPART_FILENAME", "MULTIPART_HEADER_FOLDING",
	"MULTIPART_INVALID_HEADER_FOLDING", "MULTIPART_INVALID_PART", "MULTIPART_INVALID_QUOTING",
	"MULTIPART_LF_LINE", "MULTIPART_MISSING_SEMICOLON", "MULTIPART_NAME", "MULTIPART_PART_HEADERS",
	"MULTIPART_STRICT_ERROR", "MULTIPART_UNMATCHED_BOUNDARY", "OUTBOUND_DATA_ERROR", "PATH_INFO",
	"QUERY_STRING", "REMOTE_ADDR", "REMOTE_HOST", "REMOTE_PORT", "REMOTE_USER", "REQBODY_ERROR",
	"REQBODY_ERROR_MSG", "REQBODY_PROCESSOR", "REQBODY_PROCESSOR_ERROR", "REQUEST_BASENAME", "REQUEST_BODY",
	"REQUEST_BODY_LENGTH", "REQUEST_COOKIES", "REQUEST_COOKIES_NAMES", "REQUEST_FILENAME", "REQUEST_HEADERS",
	"REQUEST_HEADERS_NAMES", "REQUEST_LINE", "REQUEST_METHOD", "REQUEST_PROTOCOL", "REQUEST_URI",
	"REQUEST_URI_RAW", "RESPONSE_BODY", "RESPONSE_CONTENT_LENGTH", "RESPONSE_CONTENT_TYPE", "RESPONSE_HEADERS",
	"RESPONSE_HEADERS_NAMES", "RESPONSE_PROTOCOL", "RESPONSE_STATUS", "RULE", "SERVER_ADDR", "SERVER_NAME",
	"SERVER_PORT", "STATUS_LINE", "TIME", "TIME_DAY", "TIME_EPOCH", "TIME_HOUR", "TIME_MIN", "TIME_MON",
	"TIME_SEC", "TIME_WDAY", "TIME_YEAR", "TX", "UNIQUE_ID", "URLENCODED_ERROR", "WEBAPPID", "XML")

func toSet(names ...string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

// CheckSecVariable checks a rule's target. A key is a name of letters,
// digits and _ . : * / [ ] $ - (REQUEST_HEADERS:Content-Type, XML:/*,
// ARGS:user[name]), or a regular expression between slashes that may
// also hold ^ ( ) ? + \ { } and commas (REQUEST_COOKIES:/^session_/).
// Keys are printed unquoted; ModSecurity 3.0.9 reads nothing else there
// ("|" would split the targets, a "}" outside a regular expression fails).
func CheckSecVariable(v SecVariable) error {
	if !SecVariables[v.Name] {
		return fmt.Errorf("variable %q is not one a rule may inspect", Truncate(v.Name))
	}
	if v.Key == "" {
		return nil
	}
	if len(v.Key) > 256 {
		return fmt.Errorf("%s: key of %d bytes is longer than 256", v.Name, len(v.Key))
	}
	if secKeyIn(v.Key, secLiteralKey) {
		return nil
	}
	inner, ok := strings.CutPrefix(v.Key, "/")
	if inner, ok2 := strings.CutSuffix(inner, "/"); ok && ok2 && inner != "" && secKeyIn(inner, secLiteralKey+secRegexKey) {
		return nil
	}
	return fmt.Errorf("%s: key %q: want a name of letters, digits and _.:*/[]$-, or a regular expression between slashes", v.Name, Truncate(v.Key))
}

// The bytes of a target's key besides letters and digits: a name's, and
// what a regular expression's may hold more.
const (
	secLiteralKey = "_.:*/[]$-"
	secRegexKey   = `^()?+\{},`
)

func secKeyIn(key, extra string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// SecOperators are the operators a rule may use, with whether they take
// an argument. Left out: those that read files (@pmFromFile, @pmf,
// @ipMatchFromFile, @validateDTD, @validateSchema, @fuzzyHash), run a
// program (@inspectFile) or ask the network (@rbl, @gsbLookup), and
// @geoLookup (no database).
var SecOperators = map[string]bool{
	"rx": true, "pm": true, "streq": true, "strmatch": true, "contains": true, "containsWord": true,
	"beginsWith": true, "endsWith": true, "within": true, "eq": true, "ge": true, "gt": true, "le": true,
	"lt": true, "ipMatch": true, "validateByteRange": true, "verifyCC": true, "verifyCPF": true, "verifySSN": true,
	"detectSQLi": false, "detectXSS": false, "validateUrlEncoding": false, "validateUtf8Encoding": false,
	"unconditionalMatch": false, "noMatch": false,
}

// CheckSecOperator checks a rule's operator.
func CheckSecOperator(o SecOperator) error {
	takes, ok := SecOperators[o.Name]
	switch {
	case !ok:
		return fmt.Errorf("operator @%s is not allowed", Truncate(o.Name))
	case takes && o.Arg == "":
		return fmt.Errorf("operator @%s needs an argument", o.Name)
	case !takes && o.Arg != "":
		return fmt.Errorf("operator @%s takes no argument", o.Name)
	case o.Arg != "":
		if err := CheckSecText(o.Arg); err != nil {
			return fmt.Errorf("operator @%s: %w", o.Name, err)
		}
	}
	if o.Name == "ipMatch" {
		// ModSecurity refuses the rules at load otherwise.
		for _, a := range strings.Split(o.Arg, ",") {
			a = strings.TrimSpace(a)
			if _, err := netip.ParsePrefix(a); err != nil {
				if _, err := netip.ParseAddr(a); err != nil {
					return fmt.Errorf("operator @ipMatch: %q is no address or CIDR", Truncate(a))
				}
			}
		}
	}
	return nil
}

// secActions are the actions a rule may have, each with its value's
// grammar (nil: takes no value). Left out: exec, setenv, setuid, setsid,
// setrsc, initcol, expirevar, deprecatevar (programs, the environment and
// persistent collections), append and prepend, proxy and redirect, and
// the sanitise* family.
var secActions = map[string]func(string) error{
	"id":    func(v string) error { _, err := secInt(v, 1, MaxSecRuleID); return err },
	"phase": checkPhase,
	"deny":  nil, "block": nil, "pass": nil, "drop": nil, "chain": nil, "capture": nil,
	"log": nil, "nolog": nil, "auditlog": nil, "noauditlog": nil, "multiMatch": nil,
	"allow":     checkAllow,
	"status":    func(v string) error { _, err := secInt(v, 100, 599); return err },
	"msg":       CheckSecText,
	"logdata":   CheckSecText,
	"tag":       CheckSecText,
	"rev":       CheckSecText,
	"ver":       CheckSecText,
	"severity":  checkSeverity,
	"maturity":  func(v string) error { _, err := secInt(v, 0, 9); return err },
	"accuracy":  func(v string) error { _, err := secInt(v, 0, 9); return err },
	"t":         checkTransformation,
	"skip":      func(v string) error { _, err := secInt(v, 1, 1000); return err },
	"skipAfter": checkSecName,
	"setvar":    checkSetvar,
	"ctl":       checkCtl,
}

// SecActionTakesValue reports whether an action is allowed and takes a
// value.
func SecActionTakesValue(name string) (allowed, value bool) {
	check, ok := secActions[name]
	return ok, check != nil
}

// CheckSecAction checks one action.
func CheckSecAction(a SecAction) error {
	check, ok := secActions[a.Name]
	switch {
	case !ok:
		return fmt.Errorf("action %q is not allowed", Truncate(a.Name))
	case check == nil && a.Value != "":
		return fmt.Errorf("action %s takes no value", a.Name)
	case check != nil && a.Value == "" && a.Name != "allow":
		return fmt.Errorf("action %s needs a value", a.Name)
	case check != nil && a.Value != "":
		if err := check(a.Value); err != nil {
			return fmt.Errorf("action %s: %w", a.Name, err)
		}
	}
	return nil
}

func checkPhase(v string) error {
	switch v {
	case "1", "2", "3", "4", "5", "request", "response", "logging":
		return nil
	}
	return fmt.Errorf("%q: want 1 to 5, request, response or logging", Truncate(v))
}

func checkAllow(v string) error {
	if v == "phase" || v == "request" {
		return nil
	}
	return fmt.Errorf("%q: want phase or request", Truncate(v))
}

func checkSeverity(v string) error {
	switch v {
	case "0", "1", "2", "3", "4", "5", "6", "7", "EMERGENCY", "ALERT", "CRITICAL", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG":
		return nil
	}
	return fmt.Errorf("%q: want 0 to 7 or a name such as CRITICAL", Truncate(v))
}

// secTransformations are the t: actions' names.
var secTransformations = toSet("none", "lowercase", "uppercase", "urlDecode", "urlDecodeUni", "urlEncode",
	"htmlEntityDecode", "jsDecode", "cssDecode", "cmdLine", "compressWhitespace", "removeWhitespace",
	"removeNulls", "replaceNulls", "removeComments", "removeCommentsChar", "replaceComments", "normalisePath",
	"normalizePath", "normalisePathWin", "normalizePathWin", "base64Decode", "base64DecodeExt", "base64Encode",
	"hexDecode", "hexEncode", "length", "md5", "sha1", "trim", "trimLeft", "trimRight", "utf8toUnicode",
	"escapeSeqDecode", "sqlHexDecode", "parityEven7bit", "parityOdd7bit", "parityZero7bit")

func checkTransformation(v string) error {
	if !secTransformations[v] {
		return fmt.Errorf("transformation %q is not known", Truncate(v))
	}
	return nil
}

// checkSetvar: the transaction collection only (tx.NAME=VALUE,
// tx.NAME=+N, tx.NAME=-N, !tx.NAME); a value is letters, digits and
// ._-+/%{} (macros such as %{tx.critical_anomaly_score}).
func checkSetvar(v string) error {
	name, value, hasValue := strings.Cut(strings.TrimPrefix(v, "!"), "=")
	rest, ok := cutPrefixFold(name, "tx.")
	if !ok || checkSecName(rest) != nil {
		return fmt.Errorf("%q: want tx.NAME=VALUE or !tx.NAME (only the transaction collection)", Truncate(v))
	}
	if strings.HasPrefix(v, "!") && hasValue {
		return fmt.Errorf("%q: !tx.NAME takes no value", Truncate(v))
	}
	if !hasValue {
		return nil
	}
	if len(value) > 256 {
		return fmt.Errorf("%q: value longer than 256 bytes", Truncate(v))
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-+/%{}:", c) >= 0) {
			return fmt.Errorf("%q: value holds %q", Truncate(v), c)
		}
	}
	return nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// checkCtl: the ctl options that change this transaction's rules, engine
// and body processing.
func checkCtl(v string) error {
	opt, arg, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q: want OPTION=VALUE", Truncate(v))
	}
	var err error
	switch opt {
	case "ruleEngine":
		err = secOneOf("On", "Off", "DetectionOnly")([]string{arg})
	case "requestBodyAccess", "forceRequestBodyVariable":
		err = secOneOf("On", "Off")([]string{arg})
	case "requestBodyProcessor":
		err = secOneOf("XML", "JSON", "URLENCODED", "MULTIPART")([]string{arg})
	case "auditEngine":
		err = secOneOf("On", "Off", "RelevantOnly")([]string{arg})
	case "auditLogParts":
		err = checkAuditParts(strings.TrimLeft(arg, "+-"))
	case "ruleRemoveById":
		_, err = ParseSecIDRange(arg)
	case "ruleRemoveByTag":
		err = checkSecTag(arg)
	case "ruleRemoveTargetById", "ruleRemoveTargetByTag":
		rule, target, found := strings.Cut(arg, ";")
		if !found {
			return fmt.Errorf("%q: want %s=RULE;TARGET", Truncate(v), opt)
		}
		if opt == "ruleRemoveTargetById" {
			_, err = ParseSecIDRange(rule)
		} else {
			err = checkSecTag(rule)
		}
		if err == nil {
			var t SecVariable
			if t, err = ParseSecVariable(target); err == nil && !secKeyIn(t.Key, secLiteralKey) {
				// ModSecurity 3.0.9 reads no regular expression here.
				err = fmt.Errorf("%q: the target's key must be a name", Truncate(target))
			}
		}
	default:
		return fmt.Errorf("ctl option %q is not allowed", Truncate(opt))
	}
	if err != nil {
		return fmt.Errorf("ctl %s: %w", opt, err)
	}
	return nil
}

// ParseSecIDRange reads "N" or "N-M".
func ParseSecIDRange(v string) (SecIDRange, error) {
	lo, hi, isRange := strings.Cut(v, "-")
	a, err := secInt(lo, 1, MaxSecRuleID)
	if err != nil {
		return SecIDRange{}, err
	}
	b := a
	if isRange {
		if b, err = secInt(hi, 1, MaxSecRuleID); err != nil {
			return SecIDRange{}, err
		}
		if b < a {
			return SecIDRange{}, fmt.Errorf("%q: the range ends before it starts", Truncate(v))
		}
	}
	return SecIDRange{a, b}, nil
}

// ParseSecVariable reads one target: [!|&]NAME[:KEY].
func ParseSecVariable(s string) (SecVariable, error) {
	var v SecVariable
	switch {
	case strings.HasPrefix(s, "!"):
		v.Exclude, s = true, s[1:]
	case strings.HasPrefix(s, "&"):
		v.Count, s = true, s[1:]
	}
	v.Name, v.Key, _ = strings.Cut(s, ":")
	v.Name = strings.ToUpper(v.Name)
	if err := CheckSecVariable(v); err != nil {
		return SecVariable{}, err
	}
	if v.Exclude && v.Key == "" {
		return SecVariable{}, fmt.Errorf("!%s: an excluded target needs a key", v.Name)
	}
	return v, nil
}

// CheckSecDirective checks one directive of any kind.
func CheckSecDirective(d SecDirective) error {
	set := 0
	for _, b := range []bool{d.Setting != nil, d.Remove != nil, d.UpdateTarget != nil, d.Rule != nil, d.Marker != "", d.Include != SecIncludeNone} {
		if b {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("a directive holds %d kinds", set)
	}
	switch {
	case d.Setting != nil:
		return CheckSecSetting(*d.Setting)
	case d.Remove != nil:
		return checkRemove(*d.Remove)
	case d.UpdateTarget != nil:
		return checkUpdateTarget(*d.UpdateTarget)
	case d.Rule != nil:
		return checkRule(*d.Rule)
	case d.Marker != "":
		return CheckSecMarker(d.Marker)
	}
	if d.Include != SecIncludeBase && d.Include != SecIncludeCRS {
		return fmt.Errorf("include %d", d.Include)
	}
	return nil
}

func checkBy(by SecBy) error {
	switch by {
	case SecByID, SecByTag, SecByMsg:
		return nil
	}
	return fmt.Errorf("by %q", Truncate(string(by)))
}

func checkRemove(r SecRemove) error {
	if err := checkBy(r.By); err != nil {
		return err
	}
	if r.By == SecByID {
		if len(r.IDs) == 0 || r.Text != "" {
			return errors.New("SecRuleRemoveById takes ids")
		}
		for _, id := range r.IDs {
			if id.Lo < 1 || id.Hi > MaxSecRuleID || id.Hi < id.Lo {
				return fmt.Errorf("SecRuleRemoveById: bad range %d-%d", id.Lo, id.Hi)
			}
		}
		return nil
	}
	if len(r.IDs) > 0 {
		return fmt.Errorf("SecRuleRemoveBy%s takes no ids", r.By)
	}
	return CheckSecText(r.Text)
}

func checkUpdateTarget(u SecUpdateTarget) error {
	if err := checkBy(u.By); err != nil {
		return err
	}
	if u.By == SecByID {
		if u.ID < 1 || u.ID > MaxSecRuleID || u.Text != "" {
			return fmt.Errorf("SecRuleUpdateTargetById: bad id %d", u.ID)
		}
	} else if err := CheckSecText(u.Text); err != nil {
		return err
	}
	if len(u.Targets) == 0 {
		return errors.New("SecRuleUpdateTarget needs targets")
	}
	for _, t := range u.Targets {
		if err := CheckSecVariable(t); err != nil {
			return err
		}
	}
	return nil
}

func checkRule(r SecRule) error {
	isRule := r.Operator != nil
	if isRule != (len(r.Variables) > 0) || isRule && r.Default {
		return errors.New("a rule has both variables and an operator, an action neither")
	}
	for _, v := range r.Variables {
		if err := CheckSecVariable(v); err != nil {
			return err
		}
	}
	if isRule {
		if err := CheckSecOperator(*r.Operator); err != nil {
			return err
		}
	}
	if len(r.Actions) > 64 {
		return fmt.Errorf("%d actions; at most 64", len(r.Actions))
	}
	for _, a := range r.Actions {
		if err := CheckSecAction(a); err != nil {
			return err
		}
	}
	return nil
}
