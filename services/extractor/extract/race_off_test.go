//go:build !race

package extract

// raceDetector is whether the tests run under the race detector, which
// slows extraction some tenfold.
const raceDetector = false
