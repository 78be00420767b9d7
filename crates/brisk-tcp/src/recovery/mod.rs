//! Loss detection and recovery, kept apart from congestion control.
