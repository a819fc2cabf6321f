"""Messages to arrays and back: field conversions and request checks (`conversions`), the robot
state read from and written to messages (`state_messages`) and the serialized (CDR) form of the
streamed messages, read and written without rclpy's message objects (`cdr_messages`)."""
