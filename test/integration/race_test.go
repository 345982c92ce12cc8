//go:build race

package integration

// raceEnabled: the tests run with the race detector, and so does the
// controller they build.
const raceEnabled = true
