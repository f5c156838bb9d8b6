package dbbench

// Thousands is thousands, for the external tests that write the guide's generated blocks.
var Thousands = thousands
