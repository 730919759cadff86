//! Unit tests of the page-cache model.
