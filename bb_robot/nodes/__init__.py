"""ROS 2 nodes of bb_robot (thin rclpy layers over the ROS-free logic in bb_robot.description)."""
