//! The allowlisting HTTP/HTTPS proxy (to be written).
