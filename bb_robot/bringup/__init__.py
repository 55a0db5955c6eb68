"""What ``bb-robot up`` computes without ROS: message rates, the demo trajectory, the picture."""
