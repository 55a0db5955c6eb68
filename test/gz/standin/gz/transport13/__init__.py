"""A test stand-in for Gazebo Harmonic's ``gz.transport13`` package (see ``_transport``)."""
