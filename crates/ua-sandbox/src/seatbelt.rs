//! The rules as a macOS Seatbelt profile (to be written).
