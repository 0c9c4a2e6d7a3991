package report

// EnvironmentWarnings lets the external tests word what environmentWarnings
// finds, through report/render, which this package's own tests cannot
// import.
var EnvironmentWarnings = environmentWarnings
