package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pol
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`,description="Whether the controller accepted the Policy (Valid, Warning or Invalid)."
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Policy is a reusable piece of behaviour that VirtualServers and
// VirtualServerRoutes refer to by name.
type Policy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PolicySpec `json:"spec"`
	// Status is written by the controller.
	Status PolicyStatus `json:"status,omitempty"`
}

// PolicyStatus reports whether the Policy is in effect.
type PolicyStatus struct {
	// State is Valid, Warning or Invalid.
	State string `json:"state,omitempty"`
	// Reason is a one-word cause of the state.
	Reason string `json:"reason,omitempty"`
	// Message explains the state.
	Message string `json:"message,omitempty"`
}

// PolicySpec holds exactly one kind of policy.
type PolicySpec struct {
	// IngressClass names the ingress class whose controller handles this resource.
	IngressClass string `json:"ingressClassName,omitempty"`
	// AccessControl allows or denies clients by IP address.
	AccessControl *AccessControl `json:"accessControl,omitempty"`
	// RateLimit limits the request rate per key.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// JWT authenticates requests with JSON Web Tokens (NGINX Plus only).
	JWT *JWTAuth `json:"jwt,omitempty"`
	// BasicAuth authenticates requests with HTTP Basic authentication.
	BasicAuth *BasicAuth `json:"basicAuth,omitempty"`
	// IngressMTLS verifies client certificates.
	IngressMTLS *IngressMTLS `json:"ingressMTLS,omitempty"`
	// EgressMTLS authenticates to upstreams and verifies their certificates.
	EgressMTLS *EgressMTLS `json:"egressMTLS,omitempty"`
	// OIDC authenticates users with OpenID Connect (NGINX Plus only).
	// +kubebuilder:validation:XValidation:rule="self.sslVerify || !has(self.trustedCertSecret)",message="trustedCertSecret requires sslVerify to be true"
	OIDC *OIDC `json:"oidc,omitempty"`
	// WAF applies NGINX App Protect WAF policies (NGINX Plus only).
	WAF *WAF `json:"waf,omitempty"`
	// APIKey authenticates requests with API keys.
	APIKey *APIKey `json:"apiKey,omitempty"`
	// Cache caches upstream responses.
	Cache *Cache `json:"cache,omitempty"`
	// CORS answers Cross-Origin Resource Sharing requests.
	CORS *CORS `json:"cors,omitempty"`
	// ExternalAuth authorizes requests with a subrequest to an authentication service.
	ExternalAuth *ExternalAuth `json:"externalAuth,omitempty"`
	// HSTS sends the Strict-Transport-Security header.
	HSTS *HSTS `json:"hsts,omitempty"`
}

// +kubebuilder:object:root=true

// PolicyList is a list of Policies.
type PolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Policy `json:"items"`
}

// AccessControl allows or denies clients by address; set allow or deny.
type AccessControl struct {
	// Allow lists the addresses or CIDR ranges allowed; all others are denied.
	Allow []string `json:"allow,omitempty"`
	// Deny lists the addresses or CIDR ranges denied; all others are allowed.
	Deny []string `json:"deny,omitempty"`
}

// RateLimit limits the request rate per key.
type RateLimit struct {
	// Rate is the allowed rate, such as 10r/s or 30r/m.
	Rate string `json:"rate,omitempty"`
	// Key is what the rate is counted per, such as ${binary_remote_addr}.
	Key string `json:"key,omitempty"`
	// Delay is the number of excess requests after which requests are delayed.
	Delay *int `json:"delay,omitempty"`
	// NoDelay serves excess requests within burst without delay.
	NoDelay *bool `json:"noDelay,omitempty"`
	// Burst is the number of excess requests allowed.
	Burst *int `json:"burst,omitempty"`
	// ZoneSize is the size of the shared memory zone, such as 10M.
	ZoneSize string `json:"zoneSize,omitempty"`
	// DryRun counts requests without limiting them.
	DryRun *bool `json:"dryRun,omitempty"`
	// LogLevel of refused requests: info, notice, warn or error.
	LogLevel string `json:"logLevel,omitempty"`
	// RejectCode is the status of refused requests, 503 by default.
	RejectCode *int `json:"rejectCode,omitempty"`
	// Scale divides the rate among the controller's replicas.
	Scale bool `json:"scale,omitempty"`
	// Condition applies this limit only to requests that meet it.
	Condition *RateLimitCondition `json:"condition,omitempty"`
}

// RateLimitCondition restricts a rate limit to some requests.
type RateLimitCondition struct {
	// JWT matches a claim of the request's JSON Web Token.
	JWT *JWTCondition `json:"jwt,omitempty"`
	// Variables match an NGINX variable.
	// +kubebuilder:validation:MaxItems=1
	Variables []VariableCondition `json:"variables,omitempty"`
	// Default applies this limit to requests that meet no other condition.
	Default bool `json:"default,omitempty"`
}

// JWTCondition matches a claim of a JSON Web Token.
type JWTCondition struct {
	// Claim is the claim's name; nested claims are joined with dots.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^([^$\s"'])*$`
	Claim string `json:"claim"`
	// Match is the value the claim must have.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^([^$\s."'])*$`
	Match string `json:"match"`
}

// VariableCondition matches an NGINX variable.
type VariableCondition struct {
	// Name of the variable, such as $request_method.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^([^\s"'])*$`
	Name string `json:"name"`
	// Match is the value the variable must have.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^([^\s"'])*$`
	Match string `json:"match"`
}

// JWTAuth authenticates requests with JSON Web Tokens (NGINX Plus only).
type JWTAuth struct {
	// Realm reported to clients.
	Realm string `json:"realm,omitempty"`
	// Secret is an nginx.org/jwk Secret holding the JSON Web Key Set; set this or jwksURI.
	Secret string `json:"secret,omitempty"`
	// Token is where the token is read from, such as $http_token; the Authorization header by default.
	Token string `json:"token,omitempty"`
	// JwksURI is a URL the JSON Web Key Set is fetched from.
	JwksURI string `json:"jwksURI,omitempty"`
	// KeyCache is how long keys fetched from jwksURI are cached.
	KeyCache string `json:"keyCache,omitempty"`
	// SNIEnabled sends the server name when fetching jwksURI.
	SNIEnabled bool `json:"sniEnabled,omitempty"`
	// SNIName overrides the server name sent when fetching jwksURI.
	SNIName string `json:"sniName,omitempty"`
	// SSLVerify verifies the certificate of the jwksURI server.
	// +kubebuilder:default:=false
	SSLVerify bool `json:"sslVerify,omitempty"`
	// TrustedCertSecret is an nginx.org/ca Secret to verify that certificate with.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	TrustedCertSecret string `json:"trustedCertSecret,omitempty"`
	// SSLVerifyDepth is the maximum length of that certificate chain.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default:=1
	SSLVerifyDepth *int `json:"sslVerifyDepth,omitempty"`
}

// BasicAuth authenticates requests with HTTP Basic authentication.
type BasicAuth struct {
	// Realm reported to clients.
	Realm string `json:"realm,omitempty"`
	// Secret is an nginx.org/htpasswd Secret holding the users.
	Secret string `json:"secret,omitempty"`
}

// IngressMTLS verifies client certificates.
type IngressMTLS struct {
	// ClientCertSecret is an nginx.org/ca Secret with the CA that signs client certificates.
	ClientCertSecret string `json:"clientCertSecret,omitempty"`
	// CrlFileName is a certificate revocation list file on the controller's filesystem.
	CrlFileName string `json:"crlFileName,omitempty"`
	// VerifyClient is on (the default), off, optional or optional_no_ca.
	VerifyClient string `json:"verifyClient,omitempty"`
	// VerifyDepth is the maximum length of the client certificate chain.
	VerifyDepth *int `json:"verifyDepth,omitempty"`
}

// EgressMTLS authenticates to upstreams and verifies their certificates.
type EgressMTLS struct {
	// TLSSecret is a kubernetes.io/tls Secret with the client certificate presented to upstreams.
	TLSSecret string `json:"tlsSecret,omitempty"`
	// VerifyServer verifies the upstream's certificate.
	VerifyServer bool `json:"verifyServer,omitempty"`
	// VerifyDepth is the maximum length of the upstream certificate chain.
	VerifyDepth *int `json:"verifyDepth,omitempty"`
	// Protocols are the TLS versions offered, such as "TLSv1.2 TLSv1.3".
	Protocols string `json:"protocols,omitempty"`
	// SessionReuse reuses TLS sessions with upstreams.
	SessionReuse *bool `json:"sessionReuse,omitempty"`
	// Ciphers offered to upstreams, in OpenSSL's format.
	Ciphers string `json:"ciphers,omitempty"`
	// TrustedCertSecret is an nginx.org/ca Secret to verify upstream certificates with.
	TrustedCertSecret string `json:"trustedCertSecret,omitempty"`
	// ServerName sends the server name to upstreams.
	ServerName bool `json:"serverName,omitempty"`
	// SSLName is the name verified in, and sent to, upstream servers.
	SSLName string `json:"sslName,omitempty"`
}

// OIDC makes NGINX an OpenID Connect relying party (NGINX Plus only).
type OIDC struct {
	// AuthEndpoint is the provider's authorization endpoint URL.
	AuthEndpoint string `json:"authEndpoint,omitempty"`
	// TokenEndpoint is the provider's token endpoint URL.
	TokenEndpoint string `json:"tokenEndpoint,omitempty"`
	// JWKSURI is the provider's JSON Web Key Set URL.
	JWKSURI string `json:"jwksURI,omitempty"`
	// ClientID issued by the provider.
	ClientID string `json:"clientID,omitempty"`
	// ClientSecret is an nginx.org/oidc Secret with the client secret.
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scope requested, such as "openid+profile".
	Scope string `json:"scope,omitempty"`
	// RedirectURI the provider sends users back to.
	RedirectURI string `json:"redirectURI,omitempty"`
	// EndSessionEndpoint is the provider's logout URL.
	EndSessionEndpoint string `json:"endSessionEndpoint,omitempty"`
	// PostLogoutRedirectURI is where users land after logging out.
	PostLogoutRedirectURI string `json:"postLogoutRedirectURI,omitempty"`
	// ZoneSyncLeeway is the time in milliseconds allowed for zone synchronisation.
	ZoneSyncLeeway *int `json:"zoneSyncLeeway,omitempty"`
	// AuthExtraArgs are extra query arguments for the authorization endpoint.
	AuthExtraArgs []string `json:"authExtraArgs,omitempty"`
	// AccessTokenEnable passes the access token to upstreams as a bearer token.
	AccessTokenEnable bool `json:"accessTokenEnable,omitempty"`
	// PKCEEnable uses Proof Key for Code Exchange.
	PKCEEnable bool `json:"pkceEnable,omitempty"`
	// SSLVerify verifies the certificate of the provider.
	// +kubebuilder:default:=false
	SSLVerify bool `json:"sslVerify,omitempty"`
	// TrustedCertSecret is an nginx.org/ca Secret to verify that certificate with.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	TrustedCertSecret string `json:"trustedCertSecret,omitempty"`
	// SSLVerifyDepth is the maximum length of that certificate chain.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default:=1
	SSLVerifyDepth *int `json:"sslVerifyDepth,omitempty"`
}

// WAF applies NGINX App Protect WAF policies (NGINX Plus only). Set one of
// apPolicy, apBundle or apBundleSource.
type WAF struct {
	// Enable turns the WAF on.
	Enable bool `json:"enable,omitempty"`
	// ApPolicy names an APPolicy resource, as name or namespace/name.
	ApPolicy string `json:"apPolicy,omitempty"`
	// ApBundle is a compiled policy bundle file name.
	ApBundle string `json:"apBundle,omitempty"`
	// ApBundleSource fetches a compiled policy bundle from a remote source.
	ApBundleSource *BundleSource `json:"apBundleSource,omitempty"`
	// SecurityLog configures one security log.
	SecurityLog *SecurityLog `json:"securityLog,omitempty"`
	// SecurityLogs configures several security logs.
	SecurityLogs []SecurityLog `json:"securityLogs,omitempty"`
}

// SecurityLog configures an App Protect security log.
type SecurityLog struct {
	// Enable turns the log on.
	Enable bool `json:"enable,omitempty"`
	// ApLogConf names an APLogConf resource (with apPolicy).
	ApLogConf string `json:"apLogConf,omitempty"`
	// ApLogBundle is a compiled log profile bundle file name (with apBundle).
	ApLogBundle string `json:"apLogBundle,omitempty"`
	// ApLogBundleSource fetches a compiled log profile bundle from a remote source.
	ApLogBundleSource *BundleSource `json:"apLogBundleSource,omitempty"`
	// LogDest is where log records go, such as syslog:server=host:port.
	LogDest string `json:"logDest,omitempty"`
}

// BundleSource fetches a compiled App Protect bundle.
type BundleSource struct {
	// Type of the source: HTTPS (the default), NIM (NGINX Instance Manager) or N1C (NGINX One Console).
	// +kubebuilder:validation:Enum=HTTPS;NIM;N1C
	// +kubebuilder:default=HTTPS
	Type string `json:"type,omitempty"`
	// URL of the bundle, or of the management API for NIM and N1C.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2083
	// +kubebuilder:validation:Pattern=`^https://`
	URL string `json:"url"`
	// Secret in the Policy's namespace with client credentials or an API token.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Secret string `json:"secret,omitempty"`
	// TrustedCertSecret is an nginx.org/ca Secret to verify the source's certificate with.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	TrustedCertSecret string `json:"trustedCertSecret,omitempty"`
	// Name of the policy on the management plane (NIM and N1C).
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`
	// Namespace on the management plane (N1C).
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
	// EnablePolling fetches the bundle again every pollInterval.
	// +kubebuilder:default:=false
	EnablePolling bool `json:"enablePolling,omitempty"`
	// PollInterval between fetches.
	PollInterval *metav1.Duration `json:"pollInterval,omitempty"`
	// Timeout of each fetch.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// RetryAttempts after a failed fetch.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	RetryAttempts *int `json:"retryAttempts,omitempty"`
	// InsecureSkipVerify does not verify the source's certificate.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// VerifyChecksum checks the bundle's SHA-256 checksum (HTTPS only).
	VerifyChecksum bool `json:"verifyChecksum,omitempty"`
}

// APIKey authenticates requests with API keys.
type APIKey struct {
	// SuppliedIn is where clients put the key.
	SuppliedIn *SuppliedIn `json:"suppliedIn,omitempty"`
	// ClientSecret is an nginx.org/apikey Secret mapping client IDs to keys.
	ClientSecret string `json:"clientSecret,omitempty"`
}

// SuppliedIn lists the headers and query arguments that carry an API key.
type SuppliedIn struct {
	// Header names.
	Header []string `json:"header,omitempty"`
	// Query argument names.
	Query []string `json:"query,omitempty"`
}

// Cache caches upstream responses.
// +kubebuilder:validation:XValidation:rule="!has(self.allowedCodes) || has(self.time)",message="allowedCodes requires time"
type Cache struct {
	// CacheZoneName names the cache zone: a lowercase letter, then letters, digits or underscores.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[a-z][a-zA-Z0-9_]*[a-zA-Z0-9]$|^[a-z]$`
	CacheZoneName string `json:"cacheZoneName"`
	// CacheZoneSize is the size of the zone's keys, such as 10m.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[0-9]+[kmgKMG]$`
	CacheZoneSize string `json:"cacheZoneSize"`
	// AllowedCodes are the status codes cached (integers from 100 to 599), or just "any".
	AllowedCodes []intstr.IntOrString `json:"allowedCodes,omitempty"`
	// AllowedMethods cached besides GET and HEAD: GET, HEAD or POST.
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:XValidation:rule="self.all(m, m in ['GET', 'HEAD', 'POST'])",message="allowedMethods may only hold GET, HEAD and POST"
	AllowedMethods []string `json:"allowedMethods,omitempty"`
	// Time responses with allowedCodes are cached for, such as 10m.
	// +kubebuilder:validation:Pattern=`^[0-9]+[smhd]$`
	Time string `json:"time,omitempty"`
	// CachePurgeAllow lists the addresses allowed to purge the cache (NGINX Plus only).
	CachePurgeAllow []string `json:"cachePurgeAllow,omitempty"`
	// OverrideUpstreamCache ignores the upstream's caching headers.
	// +kubebuilder:default=false
	OverrideUpstreamCache bool `json:"overrideUpstreamCache,omitempty"`
	// Levels of the cache directory hierarchy, such as 1:2.
	// +kubebuilder:validation:Pattern=`^[12](?::[12]){0,2}$`
	Levels string `json:"levels,omitempty"`
	// Inactive is how long unused entries are kept.
	// +kubebuilder:validation:Pattern=`^[0-9]+[smhd]$`
	Inactive string `json:"inactive,omitempty"`
	// UseTempPath writes temporary files outside the cache directory first.
	// +kubebuilder:default=false
	UseTempPath bool `json:"useTempPath,omitempty"`
	// MaxSize of the cache on disk.
	// +kubebuilder:validation:Pattern=`^[0-9]+[kmgKMG]$`
	MaxSize string `json:"maxSize,omitempty"`
	// MinFree is the disk space kept free.
	// +kubebuilder:validation:Pattern=`^[0-9]+[kmgKMG]$`
	MinFree string `json:"minFree,omitempty"`
	// Manager tunes the cache manager.
	Manager *CacheManager `json:"manager,omitempty"`
	// CacheKey is the key entries are stored under.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('$(') && !self.contains('`') && !self.contains(';') && !self.contains('&&') && !self.contains('||')",message="cacheKey may not contain $(, `, ;, && or ||"
	CacheKey string `json:"cacheKey,omitempty"`
	// CacheUseStale lists the cases in which a stale entry may be served.
	// +kubebuilder:validation:MaxItems=11
	CacheUseStale []string `json:"cacheUseStale,omitempty"`
	// CacheRevalidate revalidates expired entries with conditional requests.
	// +kubebuilder:default=false
	CacheRevalidate bool `json:"cacheRevalidate,omitempty"`
	// CacheBackgroundUpdate serves a stale entry while it is refreshed.
	// +kubebuilder:default=false
	CacheBackgroundUpdate bool `json:"cacheBackgroundUpdate,omitempty"`
	// CacheMinUses is the number of requests after which a response is cached.
	// +kubebuilder:validation:Minimum=1
	CacheMinUses *int `json:"cacheMinUses,omitempty"`
	// Lock lets only one request at a time fill an entry.
	Lock *CacheLock `json:"lock,omitempty"`
	// Conditions under which responses bypass the cache.
	Conditions *CacheConditions `json:"conditions,omitempty"`
}

// CacheManager tunes the cache manager.
type CacheManager struct {
	// Files is the most entries removed in one iteration.
	// +kubebuilder:validation:Minimum=1
	Files *int `json:"files,omitempty"`
	// Sleep between iterations, such as 50ms.
	// +kubebuilder:validation:Pattern=`^[0-9]+[mu]?s$`
	Sleep string `json:"sleep,omitempty"`
	// Threshold is the longest an iteration may take, such as 200ms.
	// +kubebuilder:validation:Pattern=`^[0-9]+[mu]?s$`
	Threshold string `json:"threshold,omitempty"`
}

// CacheLock lets only one request at a time fill a cache entry.
// +kubebuilder:validation:XValidation:rule="self.enable || (!has(self.timeout) && !has(self.age))",message="timeout and age require enable to be true"
type CacheLock struct {
	// Enable turns the lock on.
	// +kubebuilder:default=false
	Enable bool `json:"enable,omitempty"`
	// Timeout after which a waiting request goes upstream anyway.
	// +kubebuilder:validation:Pattern=`^[0-9]+[smhd]$`
	Timeout string `json:"timeout,omitempty"`
	// Age after which another request may go upstream.
	// +kubebuilder:validation:Pattern=`^[0-9]+[smhd]$`
	Age string `json:"age,omitempty"`
}

// CacheConditions say when the cache is bypassed.
type CacheConditions struct {
	// NoCache lists values (usually variables); if any is non-empty and not "0", the response is not stored.
	NoCache []string `json:"noCache,omitempty"`
	// Bypass lists values; if any is non-empty and not "0", the response is not taken from the cache.
	Bypass []string `json:"bypass,omitempty"`
}

// CORS answers Cross-Origin Resource Sharing requests.
// +kubebuilder:validation:XValidation:rule="!(has(self.allowCredentials) && self.allowCredentials && self.allowOrigin.exists(o, o == '*'))",message="allowOrigin may not hold '*' when allowCredentials is true"
type CORS struct {
	// AllowOrigin lists the allowed origins: exact, with one wildcard, or "*".
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:XValidation:rule="self.all(o, o != '')",message="allowOrigin entries may not be empty"
	AllowOrigin []string `json:"allowOrigin"`
	// AllowMethods lists the allowed methods.
	// +kubebuilder:validation:XValidation:rule="self.all(m, m != '')",message="allowMethods entries may not be empty"
	AllowMethods []string `json:"allowMethods,omitempty"`
	// AllowHeaders lists the allowed request headers.
	// +kubebuilder:validation:XValidation:rule="self.all(h, h != '')",message="allowHeaders entries may not be empty"
	AllowHeaders []string `json:"allowHeaders,omitempty"`
	// AllowCredentials allows requests with credentials.
	// +kubebuilder:default=false
	AllowCredentials *bool `json:"allowCredentials,omitempty"`
	// ExposeHeaders lists the response headers scripts may read.
	// +kubebuilder:validation:XValidation:rule="self.all(h, h != '')",message="exposeHeaders entries may not be empty"
	ExposeHeaders []string `json:"exposeHeaders,omitempty"`
	// MaxAge is how long, in seconds, browsers may cache a preflight answer.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=86400
	MaxAge *int `json:"maxAge,omitempty"`
}

// ExternalAuth authorizes requests with a subrequest to an authentication service.
type ExternalAuth struct {
	// AuthURI is the path requested on the authentication service.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^/.*$`
	// +kubebuilder:default="/"
	AuthURI string `json:"authURI"`
	// AuthServiceName is the authentication Service, as name or namespace/name.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	AuthServiceName string `json:"authServiceName"`
	// AuthServicePorts are the Service ports used.
	AuthServicePorts []int `json:"authServicePorts,omitempty"`
	// AuthSigninURI is where unauthenticated users are redirected.
	// +kubebuilder:validation:Pattern=`^/.*$`
	AuthSigninURI string `json:"authSigninURI,omitempty"`
	// AuthSnippets is raw configuration for the authentication location.
	AuthSnippets string `json:"authSnippets,omitempty"`
	// AuthSigninRedirectBasePath prefixes the sign-in redirect.
	// +kubebuilder:validation:Pattern=`^/[a-zA-Z0-9._~:/?#\[\]@!$&'()*+,;=-]*$`
	AuthSigninRedirectBasePath string `json:"authSigninRedirectBasePath,omitempty"`
	// SSLEnabled uses HTTPS towards the authentication service.
	// +kubebuilder:default:=false
	SSLEnabled bool `json:"sslEnabled,omitempty"`
	// SSLVerify verifies the authentication service's certificate.
	// +kubebuilder:default:=false
	SSLVerify bool `json:"sslVerify,omitempty"`
	// SSLVerifyDepth is the maximum length of that certificate chain.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default:=1
	SSLVerifyDepth *int `json:"sslVerifyDepth,omitempty"`
	// TrustedCertSecret is an nginx.org/ca Secret, as name or namespace/name, to verify that certificate with.
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	TrustedCertSecret string `json:"trustedCertSecret,omitempty"`
	// SNIName is the server name sent to the authentication service.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*$`
	SNIName string `json:"sniName,omitempty"`
}

// HSTS sends the Strict-Transport-Security header.
// +kubebuilder:validation:XValidation:rule="!self.preload || self.includeSubDomains",message="preload requires includeSubDomains"
// +kubebuilder:validation:XValidation:rule="!self.preload || (has(self.maxAge) && self.maxAge >= 31536000)",message="preload requires maxAge of at least 31536000 (a year)"
type HSTS struct {
	// MaxAge is how long, in seconds, browsers must use HTTPS.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Minimum=0
	MaxAge *int `json:"maxAge"`
	// IncludeSubDomains applies the header to all subdomains.
	// +kubebuilder:default:=false
	IncludeSubDomains bool `json:"includeSubDomains,omitempty"`
	// BehindProxy trusts X-Forwarded-Proto to decide whether the request used HTTPS.
	// +kubebuilder:default:=false
	BehindProxy bool `json:"behindProxy,omitempty"`
	// Preload asks to be in browsers' preload lists.
	// +kubebuilder:default:=false
	Preload bool `json:"preload,omitempty"`
}
