//! decode_errors
