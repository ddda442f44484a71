// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "./IERC20.sol";

/// @title TestToken
/// @notice A minimal ERC-20 for tests and the local playground ONLY: anyone can mint any amount with `mint`, so it
///         must never be deployed where its balances could be mistaken for something of value.
contract TestToken is IERC20 {
    /// @notice The token's name.
    string public name;

    /// @notice The token's symbol.
    string public symbol;

    /// @notice How many decimals a display of an amount uses.
    uint8 public immutable decimals;

    /// @notice The sum of all balances.
    uint256 public totalSupply;

    /// @inheritdoc IERC20
    mapping(address account => uint256) public balanceOf;

    /// @inheritdoc IERC20
    mapping(address owner => mapping(address spender => uint256)) public allowance;

    /// @notice `from` holds `balance`, less than the `needed` amount.
    error InsufficientBalance(address from, uint256 balance, uint256 needed);

    /// @notice `spender` may move `allowance` of the owner's tokens, less than the `needed` amount.
    error InsufficientAllowance(address spender, uint256 allowance, uint256 needed);

    /// @notice Tokens cannot be sent to (or minted for) the zero address.
    error InvalidReceiver(address to);

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
    }

    /// @notice Creates `value` tokens for `to`. Unrestricted on purpose: this token is for tests only.
    function mint(address to, uint256 value) external {
        if (to == address(0)) revert InvalidReceiver(to);
        totalSupply += value;
        // Cannot overflow: no balance exceeds totalSupply, whose addition above is checked.
        unchecked {
            balanceOf[to] += value;
        }
        emit Transfer(address(0), to, value);
    }

    /// @inheritdoc IERC20
    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    /// @inheritdoc IERC20
    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    /// @inheritdoc IERC20
    /// @dev An allowance of type(uint256).max is unlimited and never decreases.
    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < value) revert InsufficientAllowance(msg.sender, allowed, value);
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) private {
        if (to == address(0)) revert InvalidReceiver(to);
        uint256 balance = balanceOf[from];
        if (balance < value) revert InsufficientBalance(from, balance, value);
        // Cannot underflow (checked above) or overflow (the sum of balances is totalSupply).
        unchecked {
            balanceOf[from] = balance - value;
            balanceOf[to] += value;
        }
        emit Transfer(from, to, value);
    }
}
