//! Unit tests of the request validation.

use super::*;

#[test]
fn request_validation_matches_the_workflow() {
    assert!(validate_request(false, false, None).is_ok());
    assert!(validate_request(true, false, Some("why")).is_ok());
    assert!(validate_request(true, true, Some("why")).is_ok());
    let e = validate_request(true, false, Some("  "))
        .unwrap_err()
        .to_string();
    assert!(e.contains("acceptance note is required"), "{e}");
    let e = validate_request(false, false, Some("why"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("--note requires --accept"), "{e}");
    let e = validate_request(false, true, None).unwrap_err().to_string();
    assert!(e.contains("--bootstrap requires"), "{e}");
}
