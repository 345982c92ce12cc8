// Package version holds the build's version and commit, set by the linker.
package version

// Set with -ldflags "-X github.com/causeway/causeway/internal/version.Version=..."
var (
	Version = "dev"
	Commit  = "unknown"
)
