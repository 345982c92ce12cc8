//go:build !race

package integration

// raceEnabled: the tests run without the race detector (make
// test-integration-angie, which repeats the nginx tier's code paths on
// another data plane), and so does the controller they build.
const raceEnabled = false
